"""Recorded command outputs of nodes, as the shipped node suite's commands see them.

Each recording maps the exact command a check runs (after testinfra's quoting) to its exit
code and stdout. `replay_suite` copies the shipped checks next to a conftest whose `host` is a
testinfra backend answering from a recording, so the real checks, plugin, runner and rating
run unchanged; only `kubectl exec` is replaced. A command missing from a recording answers
127 (command not found), as on a node without that tool.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tau.cluster import suites

SMI_L = "nvidia-smi -L"
DRIVER = "nvidia-smi --query-gpu=driver_version --format=csv,noheader,nounits"
MIG_MODE = "nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader,nounits"
ECC = "nvidia-smi --query-gpu=ecc.errors.uncorrected.aggregate.dram --format=csv,noheader,nounits"
NVLINK = "nvidia-smi nvlink --status"
MODULE = "cat /proc/driver/nvidia/version"
PROCESSES = "cat /proc/[0-9]*/comm 2>/dev/null; true"
IB = (
    'for f in /sys/class/infiniband/*/ports/*/state; do [ -e "$f" ] && echo "$f $(cat "$f")";'
    " done; true"
)
DF = "df -Pk /"

Recording = dict[str, tuple[int, str]]


def _gpus(n: int, model: str = "NVIDIA H200") -> str:
    return "".join(
        f"GPU {i}: {model} (UUID: GPU-5f1c3a2e-8d4b-4c1e-9a7f-0b2d6e8c1a{i:02d})\n"
        for i in range(n)
    )


def _nvlink(gpus: int, inactive: int = 0) -> str:
    out = []
    for i in range(gpus):
        out.append(f"GPU {i}: NVIDIA H200 (UUID: GPU-5f1c3a2e-8d4b-4c1e-9a7f-0b2d6e8c1a{i:02d})")
        for link in range(18):
            dead = i == 0 and link < inactive
            out.append(f"\t Link {link}: " + ("<inactive>" if dead else "26.562 GB/s"))
    return "\n".join(out) + "\n"


def _ib(ports: int, active: int) -> str:
    return "".join(
        f"/sys/class/infiniband/mlx5_{p}/ports/1/state "
        + ("4: ACTIVE" if p < active else "1: DOWN")
        + "\n"
        for p in range(ports)
    )


BASICS: Recording = {
    PROCESSES: (0, "systemd\nkubelet\ncontainerd\ncontainerd-shim\nsleep\n"),
    DF: (
        0,
        "Filesystem     1024-blocks     Used Available Capacity Mounted on\n"
        "/dev/root        129886128 41564123  88322005      33% /\n",
    ),
    IB: (0, ""),
}

# An ND96isr_H200_v5 node: 8 H200, NVLink up, 8 InfiniBand ports, driver 570.133.20.
HEALTHY_H200: Recording = {
    **BASICS,
    SMI_L: (0, _gpus(8)),
    DRIVER: (0, "570.133.20\n" * 8),
    MIG_MODE: (0, "Disabled\n" * 8),
    ECC: (0, "0\n" * 8),
    NVLINK: (0, _nvlink(8)),
    MODULE: (
        0,
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)  Tue Mar 18 02:54:21 UTC 2025\n"
        "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n",
    ),
    IB: (0, _ib(8, 8)),
}

# An A100 80GB in MIG mode: one GPU, seven 1g.10gb instances.
MIG_A100: Recording = {
    **HEALTHY_H200,
    SMI_L: (
        0,
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0b9d3f1a-5c2e-4d7b-8e1f-2a3c4b5d6e7f)\n"
        + "".join(
            f"  MIG 1g.10gb     Device  {d}: (UUID: MIG-1c2d3e4f-5a6b-5c7d-8e9f-{d:012d})\n"
            for d in range(7)
        ),
    ),
    DRIVER: (0, "570.133.20\n"),
    MIG_MODE: (0, "Enabled\n"),
    ECC: (0, "0\n"),
    NVLINK: (0, ""),
    IB: (0, ""),
}

# A CPU node: no nvidia-smi at all.
CPU_NODE: Recording = dict(BASICS)


def changed(base: Recording, **commands: tuple[int, str]) -> Recording:
    """`base` with some commands answering differently (keys: the constants above, lowercased)."""
    out = dict(base)
    for name, answer in commands.items():
        out[globals()[name.upper()]] = answer
    return out


CONFTEST = """
import json

import pytest
import testinfra.host
from testinfra.backend import base

RECORDING = {recording}


class Replay(base.BaseBackend):
    NAME = "replay"

    def __init__(self):
        super().__init__("recorded")

    def run(self, command, *args, **kwargs):
        cmd = self.get_command(command, *args)
        rc, out = RECORDING.get(cmd, (127, ""))
        err = b"" if cmd in RECORDING else b"sh: command not found"
        return self.result(rc, self.encode(cmd), out.encode(), err)


@pytest.fixture(scope="module")
def host():
    backend = Replay()
    seen = testinfra.host.Host(backend)
    backend.set_host(seen)
    return seen
"""


def replay_suite(tmp_path: Path, recording: Recording) -> Path:
    """The shipped node checks in a directory whose `host` answers from `recording`."""
    suite = tmp_path / "replayed-node-suite"
    shutil.copytree(suites.NODE_SUITE, suite, ignore=shutil.ignore_patterns("__pycache__"))
    data = {cmd: list(answer) for cmd, answer in recording.items()}
    (suite / "conftest.py").write_text(
        CONFTEST.format(recording=repr(json.loads(json.dumps(data))))
    )
    return suite

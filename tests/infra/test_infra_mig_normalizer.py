"""The MIG normaliser script, run by bash against a fake host (nsenter, nvidia-smi, systemctl).

It is the one piece of logic the GPU pool runs on nodes; the fakes record what it asks the host
to do, so each branch (already off, needs disabling, unknown mode) is exercised for real.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from infra.gpu import MIG_NORMALIZE_SCRIPT

FAKES = {
    # nsenter -t 1 -m -u -i -n -p -- CMD...: run CMD (the fakes below) after the "--".
    "nsenter": 'while [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n',
    "nvidia-smi": (
        'echo "nvidia-smi $*" >> "$HOST_LOG"\n'
        'case "$*" in *query-gpu*) printf "%b" "$GPU_MODES" ;; esac\n'
    ),
    "systemctl": 'echo "systemctl $*" >> "$HOST_LOG"\n',
    "sleep": 'echo "sleep $*" >> "$HOST_LOG"\n',
    "tdnf": 'echo "tdnf $*" >> "$HOST_LOG"\n',
}


def normalize(tmp_path: Path, modes: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKES.items():
        path = bin_dir / name
        path.write_text("#!/usr/bin/env bash\n" + body)
        path.chmod(0o755)
    log = tmp_path / "host.log"
    log.touch()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOST_LOG": str(log),
        "GPU_MODES": modes,
        "NODE_NAME": "aks-gpu-0",
    }
    result = subprocess.run(
        ["bash", "-c", MIG_NORMALIZE_SCRIPT], env=env, capture_output=True, text=True, timeout=30
    )
    return result, log.read_text().splitlines()


@pytest.mark.parametrize("modes", ["Disabled\\n", "Disabled\\nDisabled\\n", "[N/A]\\n", "N/A\\n"])
def test_gpus_without_mig_pass_untouched(tmp_path, modes):
    result, host = normalize(tmp_path, modes)
    assert result.returncode == 0, result.stderr
    assert "MIG is off on every GPU of aks-gpu-0" in result.stdout
    assert host == ["nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader"]


def test_an_enabled_gpu_is_disabled_and_the_node_rebooted(tmp_path):
    result, host = normalize(tmp_path, "Disabled\\nEnabled\\n")
    assert result.returncode == 1  # the pod restarts after the reboot and checks again
    assert host == [
        "nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader",
        "nvidia-smi -mig 0",
        "systemctl reboot",
        "sleep 600",
    ]


def test_an_unknown_mode_fails_without_touching_the_host(tmp_path):
    result, host = normalize(tmp_path, "Enabled\\nPending\\n")
    assert result.returncode == 1
    assert "unexpected MIG modes on aks-gpu-0" in result.stderr
    assert "nvidia-smi -mig 0" not in host
    assert "systemctl reboot" not in host

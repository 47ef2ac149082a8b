"""GPU health of one node, as `tau cluster validate nodes` ships it: nvidia-smi, the driver,
MIG, NVLink and ECC.

Each check reads the node through `node` (the node's own namespaces) and records what it saw
in `facts`, which the table and `-o json` report. A node the Kubernetes API advertises no GPU
for skips them all as "no GPU" when it has no working nvidia-smi; a GPU node whose nvidia-smi
fails is UNHEALTHY and the checks that need nvidia-smi are skipped.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tau.cluster.suites.plugin import NodeUnderTest


def _query(node: Any, field: str) -> list[str]:
    """One `--query-gpu` field, one value per GPU ("" when the query fails)."""
    out = node.run("nvidia-smi --query-gpu=%s --format=csv,noheader,nounits", field)
    if out.rc != 0:
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def smi(node: Any, tau_node: NodeUnderTest, facts: dict[str, str]) -> Any:
    """`nvidia-smi -L`: the GPUs (lines `GPU n: ...`) and MIG devices the driver sees."""
    listing = node.run("nvidia-smi -L")
    facts["nvidia_smi_rc"] = str(listing.rc)
    if listing.rc != 0 and tau_node.source == "none":
        pytest.skip("no GPU")
    lines = listing.stdout.splitlines() if listing.rc == 0 else []
    facts["gpu_count"] = str(sum(line.startswith("GPU ") for line in lines))
    facts["mig_instances"] = str(sum("MIG " in line for line in lines))
    return listing


@pytest.fixture(scope="module")
def working_smi(smi: Any) -> Any:
    if smi.rc != 0:
        pytest.skip("nvidia-smi failed")
    return smi


def test_nvidia_smi_lists_the_gpus(smi: Any) -> None:
    assert smi.rc == 0, f"nvidia-smi failed (rc {smi.rc})"


def test_nvidia_smi_sees_every_allocatable_gpu(
    working_smi: Any, tau_node: NodeUnderTest, facts: dict[str, str]
) -> None:
    if tau_node.source not in ("device-plugin", "dra") or tau_node.gpus <= 0:
        pytest.skip("the node advertises no whole-GPU count")
    seen = int(facts["gpu_count"])
    assert seen >= tau_node.gpus, f"nvidia-smi sees {seen} GPUs, {tau_node.gpus} allocatable"


def test_driver_matches_the_loaded_kernel_module(
    node: Any, working_smi: Any, facts: dict[str, str]
) -> None:
    """After a driver upgrade without a reboot the user-space driver and the kernel module
    disagree, and CUDA refuses to start."""
    versions = _query(node, "driver_version")
    facts["driver_version"] = versions[0] if versions else ""
    assert versions, "nvidia-smi reports no driver version"
    loaded = node.run("cat /proc/driver/nvidia/version")
    if loaded.rc != 0:
        pytest.skip("no /proc/driver/nvidia/version on this node")
    match = re.search(r"Kernel Module.*?\s(\d+\.\d+(?:\.\d+)*)\s", loaded.stdout)
    assert match, "cannot read the kernel module's version from /proc/driver/nvidia/version"
    assert match.group(1) == versions[0], (
        f"driver: kernel module {match.group(1)}, nvidia-smi {versions[0]}"
    )


def test_mig_enabled_gpus_have_instances(
    node: Any, working_smi: Any, facts: dict[str, str]
) -> None:
    modes = _query(node, "mig.mode.current")
    facts["mig_mode"] = modes[0] if modes else ""
    if facts["mig_mode"].lower() == "enabled":
        assert int(facts["mig_instances"]) > 0, (
            "MIG enabled without instances: CUDA cannot create a context"
        )


@pytest.fixture(scope="module")
def nvlink(node: Any, working_smi: Any, facts: dict[str, str]) -> tuple[int, int]:
    """(rc of `nvidia-smi nvlink --status`, inactive links or -1 when there is no status)."""
    out = node.run("nvidia-smi nvlink --status")
    inactive = out.stdout.count("<inactive>") if out.rc == 0 and out.stdout.strip() else -1
    facts["nvlink_rc"], facts["nvlink_inactive"] = str(out.rc), str(inactive)
    return out.rc, inactive


def test_nvlink_links_active(nvlink: tuple[int, int]) -> None:
    _, inactive = nvlink
    if inactive < 0:
        pytest.skip("no NVLink status")
    assert inactive == 0, f"NVLink: {inactive} inactive"


@pytest.mark.degraded
def test_nvlink_status_available(nvlink: tuple[int, int]) -> None:
    rc, _ = nvlink
    assert rc == 0, "NVLink status unavailable"


@pytest.mark.degraded
def test_no_uncorrected_ecc_errors(node: Any, working_smi: Any, facts: dict[str, str]) -> None:
    counts = _query(node, "ecc.errors.uncorrected.aggregate.dram")
    errors = sum(int(value) for value in counts if value.isdigit())
    facts["ecc_dbe"] = str(errors)
    assert errors == 0, f"{errors} uncorrected ECC errors"

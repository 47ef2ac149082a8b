"""Node basics every probed node gets, GPU or not: the kubelet and a container runtime run,
the root filesystem has room, and every InfiniBand port present is ACTIVE."""

from __future__ import annotations

from typing import Any

import pytest

# kubelet's default hard eviction threshold is nodefs.available<10%.
MIN_FREE_PERCENT = 10
PROCESS_NAMES = "cat /proc/[0-9]*/comm 2>/dev/null; true"  # one exec, any shell, no procps
IB_PORTS = (
    'for f in /sys/class/infiniband/*/ports/*/state; do [ -e "$f" ] && echo "$f $(cat "$f")";'
    " done; true"
)


@pytest.fixture(scope="module")
def processes(node: Any) -> set[str]:
    """The command names of the node's processes (its PID namespace, through hostPID)."""
    return {line.strip() for line in node.check_output(PROCESS_NAMES).splitlines()}


def test_kubelet_runs(processes: set[str]) -> None:
    assert "kubelet" in processes, "kubelet is not running"


def test_a_container_runtime_runs(processes: set[str]) -> None:
    assert processes & {"containerd", "crio", "dockerd"}, (
        "no container runtime (containerd, CRI-O, dockerd) is running"
    )


@pytest.mark.degraded
def test_root_filesystem_has_room(node: Any, facts: dict[str, str]) -> None:
    out = node.check_output("df -Pk /")
    used = int(out.splitlines()[-1].split()[4].rstrip("%"))
    facts["rootfs_used_percent"] = str(used)
    assert 100 - used >= MIN_FREE_PERCENT, f"root filesystem {used}% full"


@pytest.mark.degraded
def test_infiniband_ports_active(node: Any, facts: dict[str, str]) -> None:
    states = [line for line in node.check_output(IB_PORTS).splitlines() if line.strip()]
    active = sum("ACTIVE" in line for line in states)
    facts["ib_total"], facts["ib_active"] = str(len(states)), str(active)
    if not states:
        pytest.skip("no InfiniBand ports")
    assert active == len(states), f"InfiniBand: {active}/{len(states)} ports active"

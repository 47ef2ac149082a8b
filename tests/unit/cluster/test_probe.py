"""Node probe: GPU discovery and health assessment, from recorded nvidia-smi probe outputs."""

from __future__ import annotations

import pytest

from tau.cluster.probe import (
    DEGRADED,
    HEALTHY,
    UNHEALTHY,
    UNKNOWN,
    GpuNode,
    NodeHealth,
    assess,
    classify_nodes,
    exit_ok,
    parse_probe_output,
    probe_pod,
    table_row,
)

H200 = GpuNode("aks-h200-0", "device-plugin", 8)

# Recorded `key=value` output of the probe script on an ND96isr_H200_v5 node.
HEALTHY_H200 = """\
nvidia_smi_rc=0
gpu_count=8
driver_version=570.133.20
mig_mode=Disabled
mig_instances=0
nvlink_rc=0
nvlink_inactive=0
ecc_dbe=0
ib_total=8
ib_active=8
"""


def recorded(**changes: str) -> str:
    values = parse_probe_output(HEALTHY_H200)
    values.update(changes)
    return "\n".join(f"{k}={v}" for k, v in values.items())


CASES = {
    "healthy H200": (H200, HEALTHY_H200, HEALTHY, ""),
    "NVLink inactive": (H200, recorded(nvlink_inactive="4"), UNHEALTHY, "NVLink: 4 inactive"),
    "NVLink status unavailable": (
        H200,
        recorded(nvlink_inactive="-1", nvlink_rc="3"),
        DEGRADED,
        "NVLink status unavailable",
    ),
    "ECC errors": (H200, recorded(ecc_dbe="2"), DEGRADED, "2 uncorrected ECC errors"),
    "IB down": (H200, recorded(ib_active="6"), DEGRADED, "InfiniBand: 6/8 ports active"),
    "MIG enabled without instances": (
        GpuNode("aks-a100-mig-0", "mig", 0),
        recorded(mig_mode="Enabled", mig_instances="0", gpu_count="1"),
        UNHEALTHY,
        "MIG enabled without instances",
    ),
    "nvidia-smi failure": (
        H200,
        "nvidia_smi_rc=9\ngpu_count=0\n",
        UNHEALTHY,
        "nvidia-smi failed (rc 9)",
    ),
    "fewer GPUs than allocatable": (H200, recorded(gpu_count="7"), UNHEALTHY, "sees 7 GPUs, 8"),
    "ECC errors and a dead NVLink": (
        H200,
        recorded(ecc_dbe="1", nvlink_inactive="2"),
        UNHEALTHY,
        "NVLink: 2 inactive",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_assessment_of_recorded_probe_output(case):
    node, output, status, reason = CASES[case]
    health = assess(node, parse_probe_output(output))
    assert health.status == status
    assert reason in "; ".join(health.reasons)
    if status == HEALTHY:
        assert health.reasons == []


def test_missing_output_is_unknown_with_a_pod_error():
    health = assess(H200, parse_probe_output("tdnf: installing util-linux\n"))
    assert health.status == UNKNOWN
    assert health.pod_error == "no validation output"


def test_parse_ignores_noise_and_keeps_values():
    values = parse_probe_output("Loaded plugin\nnvidia_smi_rc=0\n  gpu_count = 8\nno equals here\n")
    assert values == {"nvidia_smi_rc": "0", "gpu_count": "8"}


def _node(name, allocatable=None, labels=None):
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"allocatable": allocatable or {"cpu": "16"}},
    }


def test_discovery_prefers_device_plugin_then_mig_then_dra():
    nodes = [
        _node("plugin", {"nvidia.com/gpu": "8", "nvidia.com/mig-1g.10gb": "0"}),
        _node("mig", {"nvidia.com/mig-1g.10gb": "3", "nvidia.com/mig-2g.20gb": "2"}),
        _node("dra"),
        _node("cpu"),
    ]
    slices = [
        {
            "spec": {
                "nodeName": "dra",
                "driver": "gpu.nvidia.com",
                "pool": {"name": "dra"},
                "devices": [{"name": "gpu-0"}, {"name": "gpu-0-mig-1"}, {"name": "gpu-1"}],
            }
        },
        {"spec": {"nodeName": "cpu", "driver": "net.example.com", "devices": [{"name": "nic"}]}},
    ]
    gpu_nodes, stranded = classify_nodes(nodes, slices)
    assert [(n.name, n.source, n.count) for n in gpu_nodes] == [
        ("plugin", "device-plugin", 8),
        ("mig", "mig", 0),
        ("dra", "dra", 2),
    ]
    assert stranded == []


def test_gpu_hardware_without_gpu_resources_is_stranded_not_probed():
    nodes = [
        _node("no-plugin", labels={"node.kubernetes.io/instance-type": "Standard_ND96isr_H200_v5"}),
        _node("labelled", labels={"tau.azure.com/gpu-class": "a100-80gb"}),
        _node("cpu", labels={"node.kubernetes.io/instance-type": "Standard_D16ds_v5"}),
    ]
    gpu_nodes, stranded = classify_nodes(nodes, [])
    assert gpu_nodes == []
    assert stranded == ["no-plugin", "labelled"]


def test_exit_rules():
    healthy = NodeHealth("a", HEALTHY)
    degraded = NodeHealth("b", DEGRADED)
    unhealthy = NodeHealth("c", UNHEALTHY)
    assert exit_ok([healthy, degraded], 0)
    assert not exit_ok([healthy, unhealthy], 0)
    assert not exit_ok([NodeHealth("d", HEALTHY, pod_error="timeout")], 0)
    assert exit_ok([healthy, unhealthy], 1)
    assert not exit_ok([healthy, degraded], 2)


def test_probe_pod_is_privileged_pinned_and_short_named():
    pod = probe_pod("aks-" + "x" * 70, stamp=0xABC)
    spec = pod["spec"]
    assert len(pod["metadata"]["name"]) <= 63
    assert pod["metadata"]["namespace"] == "default"
    assert pod["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "tau-validate"}
    assert spec["nodeName"] == "aks-" + "x" * 70
    assert spec["hostPID"] and spec["hostNetwork"] and spec["restartPolicy"] == "Never"
    assert spec["tolerations"] == [{"operator": "Exists"}]
    container = spec["containers"][0]
    assert container["securityContext"] == {"privileged": True}
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_table_row_shows_mig_slices_and_reasons():
    node = GpuNode("mig-0", "mig", 0)
    health = assess(node, parse_probe_output(recorded(mig_mode="Enabled", mig_instances="7")))
    row = table_row(node, health)
    assert row[1] == "8 (7 slices)"
    assert row[-1] == HEALTHY


def test_node_selector_from_gpu_class_and_selector():
    from tau.cluster.probe import node_selector
    from tau.errors import UsageError

    assert node_selector("H200_141GB", "pool=a") == (
        "tau.azure.com/gpu-class=h200-141gb,pool=a",
        "",
    )
    assert node_selector("any", "pool=a") == ("pool=a", "")
    selector, warning = node_selector("a100-nvlink-80gb", "")
    assert selector == "tau.azure.com/gpu-class=a100-80gb" and "deprecated" in warning
    with pytest.raises(UsageError, match="conflicts"):
        node_selector("any", "tau.azure.com/gpu-class=a100-80gb")
    with pytest.raises(UsageError, match="not a supported class"):
        node_selector("tpu-v5", "")

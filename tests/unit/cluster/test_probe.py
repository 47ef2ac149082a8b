"""Node probe: GPU discovery, and the health rating of the shipped node suite's checks run on
recorded command outputs of GPU and CPU nodes (tests/unit/cluster/recordings.py)."""

from __future__ import annotations

import pytest

from tau.cluster import suites
from tau.cluster.probe import (
    DEGRADED,
    HEALTHY,
    NO_GPU,
    UNHEALTHY,
    UNKNOWN,
    GpuNode,
    NodeHealth,
    classify_nodes,
    exit_ok,
    probe_pod,
    rate,
    table_row,
)
from tests.unit.cluster import recordings as rec

H200 = GpuNode("aks-h200-0", "device-plugin", 8)
MIG = GpuNode("aks-a100-mig-0", "mig", 0)
CPU = GpuNode("real-cpu-0", NO_GPU, 0)


def probe_recorded(tmp_path, node: GpuNode, recording: rec.Recording) -> NodeHealth:
    """What `validate nodes` rates a node whose commands answer as recorded."""
    options = [
        f"--tau-node-name={node.name}",
        f"--tau-gpu-source={node.source}",
        f"--tau-gpu-count={node.count}",
    ]
    suite = rec.replay_suite(tmp_path, recording)
    return rate(node, suites.run([suite], "kubectl://unused", options=options, timeout=120))


H200_LINK_DOWN = rec.changed(rec.HEALTHY_H200, nvlink=(0, rec._nvlink(8, inactive=4)))
CASES = {
    "healthy H200": (H200, rec.HEALTHY_H200, HEALTHY, []),
    "NVLink inactive": (H200, H200_LINK_DOWN, UNHEALTHY, ["NVLink: 4 inactive"]),
    "NVLink status unavailable": (
        H200,
        rec.changed(rec.HEALTHY_H200, nvlink=(3, "")),
        DEGRADED,
        ["NVLink status unavailable"],
    ),
    "ECC errors": (
        H200,
        rec.changed(rec.HEALTHY_H200, ecc=(0, "0\n2\n" + "0\n" * 6)),
        DEGRADED,
        ["2 uncorrected ECC errors"],
    ),
    "IB down": (
        H200,
        rec.changed(rec.HEALTHY_H200, ib=(0, rec._ib(8, 6))),
        DEGRADED,
        ["InfiniBand: 6/8 ports active"],
    ),
    "MIG enabled without instances": (
        MIG,
        rec.changed(rec.MIG_A100, smi_l=(0, rec._gpus(1, "NVIDIA A100-SXM4-80GB"))),
        UNHEALTHY,
        ["MIG enabled without instances: CUDA cannot create a context"],
    ),
    "nvidia-smi failure": (
        H200,
        rec.changed(rec.HEALTHY_H200, smi_l=(9, "")),
        UNHEALTHY,
        ["nvidia-smi failed (rc 9)"],
    ),
    "fewer GPUs than allocatable": (
        H200,
        rec.changed(rec.HEALTHY_H200, smi_l=(0, rec._gpus(7))),
        UNHEALTHY,
        ["nvidia-smi sees 7 GPUs, 8 allocatable"],
    ),
    "driver upgraded without a reboot": (
        H200,
        rec.changed(
            rec.HEALTHY_H200,
            module=(0, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Wed Feb\n"),
        ),
        UNHEALTHY,
        ["driver: kernel module 570.124.06, nvidia-smi 570.133.20"],
    ),
    "ECC errors and a dead NVLink": (
        H200,
        rec.changed(H200_LINK_DOWN, ecc=(0, "1\n" + "0\n" * 7)),
        UNHEALTHY,
        ["NVLink: 4 inactive", "1 uncorrected ECC errors"],
    ),
    "root filesystem full": (
        H200,
        rec.changed(
            rec.HEALTHY_H200,
            df=(
                0,
                "Filesystem 1024-blocks Used Available Capacity Mounted on\n"
                "/dev/root 100 95 5 95% /\n",
            ),
        ),
        DEGRADED,
        ["root filesystem 95% full"],
    ),
    "kubelet gone": (
        CPU,
        rec.changed(rec.CPU_NODE, processes=(0, "systemd\ncontainerd\n")),
        UNHEALTHY,
        ["kubelet is not running"],
    ),
}


RECORDED = {
    **{case: (node, recording) for case, (node, recording, _, _) in CASES.items()},
    "MIG with instances": (MIG, rec.MIG_A100),
    "CPU node": (CPU, rec.CPU_NODE),
}


@pytest.fixture(scope="module")
def rated(tmp_path_factory) -> dict[str, NodeHealth]:
    """Every recording probed once, a few suites at a time (each is its own pytest process)."""
    from concurrent.futures import ThreadPoolExecutor

    # Directories first: pytest's temporary-directory factory is not thread-safe.
    places = {case: tmp_path_factory.mktemp("recorded") for case in RECORDED}

    def one(case: str) -> NodeHealth:
        node, recording = RECORDED[case]
        return probe_recorded(places[case], node, recording)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(RECORDED, pool.map(one, RECORDED), strict=True))


@pytest.mark.parametrize("case", CASES)
def test_rating_of_the_node_suite_on_recorded_outputs(case, rated):
    _, _, status, reasons = CASES[case]
    health = rated[case]
    assert health.pod_error == ""
    assert (health.status, health.reasons) == (status, reasons)


def test_a_healthy_h200_reports_its_facts_in_the_table(rated):
    health = rated["healthy H200"]
    assert {c.outcome for c in health.checks} == {suites.PASSED}
    assert table_row(H200, health) == [
        "aks-h200-0",
        "8/8",
        "device-plugin",
        "ok",
        "8/8",
        "0",
        "570.133.20",
        HEALTHY,
    ]


def test_a_failing_nvidia_smi_skips_the_checks_that_need_it(rated):
    health = rated["nvidia-smi failure"]
    skipped = {c.name for c in health.checks if c.outcome == suites.SKIPPED}
    assert "test_gpu.py::test_no_uncorrected_ecc_errors" in skipped
    assert all(
        c.message == "nvidia-smi failed"
        for c in health.checks
        if c.name in skipped and "gpu" in c.name
    )
    row = table_row(H200, health)
    assert row[1] == "0/8" and row[-1] == "UNHEALTHY (nvidia-smi failed (rc 9))"


def test_mig_node_table_counts_slices(rated):
    health = rated["MIG with instances"]
    assert health.status == HEALTHY, health.reasons
    assert table_row(MIG, health)[:4] == ["aks-a100-mig-0", "1 (7 slices)", "mig", "n/a"]


def test_a_cpu_node_reports_no_gpu_as_such(rated):
    health = rated["CPU node"]
    assert health.status == HEALTHY and health.reasons == []
    gpu_checks = [c for c in health.checks if c.name.startswith("test_gpu.py")]
    assert gpu_checks and {(c.outcome, c.message) for c in gpu_checks} == {
        (suites.SKIPPED, "no GPU")
    }
    assert health.values["nvidia_smi_rc"] == "127"
    assert table_row(CPU, health) == ["real-cpu-0", "no GPU", "none", "n/a", "-", "-", "-", HEALTHY]


def test_a_suite_that_could_not_run_is_unknown_with_a_pod_error():
    health = rate(H200, suites.SuiteResult(error="checks did not finish within 10s"))
    assert (health.status, health.pod_error) == (UNKNOWN, "checks did not finish within 10s")
    broken = suites.Check("test_x.py::test_y[kubectl://p]", suites.ERROR, "unhealthy", "boom")
    health = rate(H200, suites.SuiteResult(checks=[broken]))
    assert health.status == UNKNOWN
    assert health.pod_error == "test_x.py::test_y could not run: boom"
    assert table_row(H200, health)[-1] == "UNKNOWN (pod: test_x.py::test_y could not run: boom)"


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


def test_probe_pod_is_privileged_pinned_sleeping_and_short_named():
    pod = probe_pod("aks-" + "x" * 70, stamp=0xABC, image="registry/tau:1", seconds=180)
    spec = pod["spec"]
    assert len(pod["metadata"]["name"]) <= 63
    assert pod["metadata"]["namespace"] == "default"
    assert pod["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "tau-validate"}
    assert spec["nodeName"] == "aks-" + "x" * 70
    assert spec["hostPID"] and spec["hostNetwork"] and spec["restartPolicy"] == "Never"
    assert spec["tolerations"] == [{"operator": "Exists"}]
    (container,) = spec["containers"]
    assert container["name"] == "validate" and container["image"] == "registry/tau:1"
    assert container["command"] == ["sleep", "180"]
    assert container["securityContext"] == {"privileged": True, "runAsUser": 0, "runAsGroup": 0}
    # The node's / read-only at /host, where the `node` fixture chroots.
    assert container["volumeMounts"] == [
        {
            "name": "host",
            "mountPath": "/host",
            "readOnly": True,
        }
    ]
    assert spec["volumes"] == [{"name": "host", "hostPath": {"path": "/", "type": "Directory"}}]


def test_cpu_nodes_are_probed_only_when_asked():
    nodes = [_node("plugin", {"nvidia.com/gpu": "1"}), _node("cpu")]
    assert [n.name for n in classify_nodes(nodes, [])[0]] == ["plugin"]
    probed, _ = classify_nodes(nodes, [], include_cpu=True)
    assert [(n.name, n.source, n.count) for n in probed] == [
        ("plugin", "device-plugin", 1),
        ("cpu", NO_GPU, 0),
    ]


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


def test_a_probe_pod_that_cannot_start_says_why():
    from tau.cluster.probe import _container_state

    pulling = {
        "status": {
            "phase": "Pending",
            "containerStatuses": [
                {
                    "state": {
                        "waiting": {
                            "reason": "ImagePullBackOff",
                            "message": 'Back-off pulling image "mirror/tau:0.3.2"\nmore',
                        }
                    }
                }
            ],
        }
    }
    assert _container_state(pulling) == (
        ' (ImagePullBackOff: Back-off pulling image "mirror/tau:0.3.2")'
    )
    exited = {"status": {"containerStatuses": [{"state": {"terminated": {"reason": "Error"}}}]}}
    assert _container_state(exited) == " (Error)"
    assert _container_state({"status": {}}) == ""

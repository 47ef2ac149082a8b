"""`tau cluster validate nodes` against the local control plane: its KWOK GPU nodes and the
real node.

KWOK runs no containers, so `kubectl exec` into a probe pod there never answers: those tests
pin down discovery, the privileged probe pod's admission and placement, the stranded-node
warning, the exit rules for nodes that cannot be assessed, and that no probe pod is left
behind. On the real kubelet/containerd node the shipped testinfra checks and an operator's
`--suite` really run through testinfra's kubectl backend and `chroot /host`, and report the CPU
node's "no GPU" as such.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from controller_harness import unique
from installed_checks import probe_pods

from hack.images import ImageRef
from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

REPO = Path(__file__).resolve().parents[2]


def tau(cluster, *args: str) -> subprocess.CompletedProcess[str]:
    # kubectl on PATH: testinfra's kubectl backend shells out to it.
    path = os.pathsep.join([str(REPO / ".venv" / "bin"), str(cluster.bin_dir), os.environ["PATH"]])
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "PATH": path}
    return subprocess.run(
        [sys.executable, "-m", "tau", "cluster", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=120,
    )


def test_gpu_class_selects_the_pool_and_an_unreported_probe_is_unknown(local_cluster):
    done = tau(
        local_cluster,
        "validate",
        "nodes",
        "--gpu-class",
        fx.GPU_CLASS_A100,
        "--timeout",
        "10s",
        "-o",
        "json",
    )
    assert done.returncode == 1
    report = json.loads(done.stdout)
    (node,) = report["nodes"]
    assert node["node"] == fx.A100_POOL.node_names[0]
    assert (node["source"], node["allocatable"]) == ("device-plugin", fx.A100_POOL.gpus)
    assert node["status"] == "UNKNOWN"
    assert node["podError"].startswith("kubectl exec into the probe pod"), node["podError"]
    assert report["healthy"] == 0
    assert done.stderr.strip().splitlines()[-1] == "error: 0/1 GPU nodes healthy"
    assert probe_pods(local_cluster) == []


def test_gpu_looking_node_without_gpu_resources_is_reported_stranded(local_cluster):
    name = unique("kwok-e2e-stranded")
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {fx.KWOK_NODE_ANNOTATION: fx.KWOK_NODE_ANNOTATION_VALUE},
            "labels": {
                "type": "kwok",
                fx.INSTANCE_TYPE_LABEL: "Standard_ND96isr_H200_v5",
                "stranded-e2e": name,
            },
        },
    }
    local_cluster.kubectl("apply", "-f", "-", input=json.dumps(node))
    try:
        done = tau(local_cluster, "validate", "nodes", "--selector", f"stranded-e2e={name}")
        assert done.returncode == 0, done.stderr
        assert f"warning: {name} looks like GPU hardware" in done.stderr
        assert "no GPU nodes found" in done.stderr
        needed = tau(
            local_cluster,
            "validate",
            "nodes",
            "--selector",
            f"stranded-e2e={name}",
            "--min-healthy",
            "1",
        )
        assert needed.returncode == 1 and "--min-healthy 1" in needed.stderr
    finally:
        local_cluster.kubectl("delete", "node", name, "--wait=false", check=False)


# An operator's own checks: `node` sees the node (chroot into its / at /host), `host` the
# probe container (the image's venv at /opt/taugrid exists only there).
SITE_SUITE = """
import pytest


def test_the_probe_container_runs_our_image(host):
    assert host.file("/opt/taugrid/bin/python3").exists


def test_checks_see_the_node_not_the_container(node, tau_node, facts):
    facts["site_node"] = tau_node.name
    assert not node.file("/opt/taugrid").exists


@pytest.mark.degraded
def test_site_mirror_configured(node):
    assert node.file("/etc/tau-e2e-mirror.conf").exists, "site registry mirror not configured"
"""


def test_the_real_cpu_node_is_probed_for_real_and_reports_no_gpu(
    local_cluster: LocalCluster, local_images: dict[str, ImageRef], tmp_path: Path
):
    """One run on the real node: the shipped checks (GPU checks "no GPU", node basics pass)
    and an operator suite whose degraded check fails, through a privileged pod of this
    checkout's controller image (the runtime image's base: sh, sleep, chroot),
    which is deleted afterwards."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "test_site.py").write_text(textwrap.dedent(SITE_SUITE))
    done = tau(
        local_cluster,
        "validate",
        "nodes",
        "--include-cpu",
        "--selector",
        ",".join(f"{k}={v}" for k, v in fx.REAL_NODE_SELECTOR.items()),
        "--image",
        local_images["controller"].reference,
        "--suite",
        str(site),
        "-o",
        "json",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (node,) = report["nodes"]
    assert (node["node"], node["source"], node["allocatable"]) == (fx.REAL_NODE, "none", 0)
    assert node["podError"] == "", node
    checks = {c["check"]: (c["outcome"], c["message"]) for c in node["checks"]}
    gpu = {name: result for name, result in checks.items() if name.startswith("test_gpu.py")}
    assert gpu and set(gpu.values()) == {("skipped", "no GPU")}, checks
    assert checks["test_node.py::test_kubelet_runs"] == ("passed", ""), checks
    assert checks["test_node.py::test_a_container_runtime_runs"] == ("passed", ""), checks
    assert checks["test_node.py::test_root_filesystem_has_room"] == ("passed", ""), checks
    assert checks["test_site.py::test_the_probe_container_runs_our_image"] == ("passed", "")
    assert checks["test_site.py::test_checks_see_the_node_not_the_container"] == ("passed", "")
    assert node["status"] == "DEGRADED"
    assert node["reasons"] == ["site registry mirror not configured"]
    assert node["probe"]["nvidia_smi_rc"] == "127" and node["probe"]["site_node"] == fx.REAL_NODE
    assert (report["healthy"], report["total"]) == (0, 1)
    assert probe_pods(local_cluster) == []

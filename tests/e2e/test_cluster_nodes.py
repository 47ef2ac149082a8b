"""`tau cluster validate nodes` against the local control plane's KWOK GPU nodes.

KWOK runs no containers, so `kubectl exec` into a probe pod there never answers: those tests
pin down discovery, the privileged probe pod's admission and placement, the stranded-node
warning, the exit rules for nodes that cannot be assessed, and that no probe pod is left
behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from controller_harness import items, unique

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


def probe_pods(cluster) -> list[dict]:
    return items(
        cluster, "pods", "-n", "default", "-l", "app.kubernetes.io/managed-by=tau-validate"
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

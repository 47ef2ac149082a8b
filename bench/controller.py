"""Benchmark: the tau-core controller over 1,000 KWOK GPU nodes and the chart's profiles.

Targets (issue #24): the first full reconcile costs ≤ 2 s of controller CPU; a no-op
resync writes nothing; the controller stays ≤ 200 MB RSS; one node label change is
repaired in ≤ 1 s. The controller runs as a real process (`python -m tau.controller`, the
chart's ServiceAccount identity and RBAC, leader election on, as the e2e harness runs it)
against the local control plane: an existing one via --kubeconfig (admin), else a fresh
one started for the run. Requests are the controller's own count
(`tau_controller_api_requests_total`), its Lease renewals left out.

    python bench/controller.py [--nodes 1000] [--idle-seconds 60] [--kubeconfig PATH]
                               [--keep-nodes]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchkit import REPO, on_cluster

VM_SIZE = "Standard_NC40ads_H100_v5"  # chart catalog: nc-h100-v5 / h100-95gb
GPU_CLASS = "tau.azure.com/gpu-class"
GPU_SERIES = "kueue.azure.com/gpu-series"
BENCH_LABEL = "tau.azure.com/bench"
PROFILE_NAMESPACE = "taugrid-default"  # where the chart's profiles look for `jobqueue`
TARGET_CPU_S, TARGET_WRITES, TARGET_RSS_MB, TARGET_REACTION_S = 2.0, 0, 200, 1.0
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def memory_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) in MB."""
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return (int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024)


WRITE_VERBS = ("create", "update", "patch", "delete")


def sent(controller, since: dict | None = None) -> dict[str, int]:
    """Requests the controller sent (its own `tau_controller_api_requests_total`), since an
    earlier reading, without its Lease renewals: writes, LISTs, and the writes by resource."""
    now = controller.api_requests()
    grown = {k: n - (since or {}).get(k, 0) for k, n in now.items() if k[1] != "leases"}
    counts = {
        "writes": sum(n for (verb, _), n in grown.items() if verb in WRITE_VERBS),
        "LISTs": sum(n for (verb, _), n in grown.items() if verb == "list"),
        "GETs": sum(n for (verb, _), n in grown.items() if verb == "get"),
    }
    for (verb, resource), n in sorted(grown.items()):
        if verb in WRITE_VERBS and n:
            counts[f"{verb} {resource}"] = n
    return counts


def describe(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {what}" for what, n in counts.items())


def bench_nodes(count: int) -> list[dict[str, Any]]:
    """KWOK-managed H100 nodes carrying only what AKS sets: the VM size, no rule labels."""
    from hack.localcluster import fixtures as fx

    nodes = []
    for i in range(count):
        name = f"bench-h100-{i}"
        resources = {"cpu": "40", "memory": "320Gi", "pods": "110", fx.GPU_RESOURCE: "1"}
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {fx.KWOK_NODE_ANNOTATION: fx.KWOK_NODE_ANNOTATION_VALUE},
                    "labels": {
                        "type": "kwok",
                        "kubernetes.io/hostname": name,
                        fx.INSTANCE_TYPE_LABEL: VM_SIZE,
                        fx.AGENTPOOL_LABEL: "benchh100",
                        BENCH_LABEL: "controller",
                    },
                },
                "spec": {"taints": [fx.GPU_TAINT]},
                "status": {"allocatable": resources, "capacity": resources},
            }
        )
    return nodes


def chart_tau_cluster() -> str:
    """The chart's TauCluster (VM-size catalog, workload profiles) in Reconcile mode."""
    chart = REPO / "charts" / "taugrid" / "charts" / "tau-core-controller"
    return subprocess.run(
        ["helm", "template", "tau-core-controller", str(chart),
         "--set", "tauCluster.managementMode=Reconcile",
         "--show-only", "templates/taucluster.yaml"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


def setup(cluster, count: int) -> None:
    from tau.kube import KubeClient
    from tau.kube.resources import NODES

    cluster.kubectl("delete", "clusters.tau.azure.com", "cluster", "--ignore-not-found")
    cluster.apply(
        [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": PROFILE_NAMESPACE}},
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "jobqueue", "namespace": PROFILE_NAMESPACE},
                "spec": {"clusterQueue": "jobqueue"},
            },
        ]
    )
    existing = {
        n["metadata"]["name"] for n in cluster.get_json("nodes", "-l", BENCH_LABEL)["items"]
    }
    missing = [n for n in bench_nodes(count) if n["metadata"]["name"] not in existing]
    for start in range(0, len(missing), 100):
        cluster.kubectl("create", "-f", "-", input=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": missing[start : start + 100]}
        ), timeout=300)  # fmt: skip
    # Start unlabelled: the controller labels every node in its first pass.
    labelled = cluster.get_json("nodes", "-l", f"{BENCH_LABEL},{GPU_CLASS}")["items"]
    kube = KubeClient(cluster.kubeconfig)
    unlabel = {"metadata": {"labels": {GPU_CLASS: None, GPU_SERIES: None}}}
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: kube.patch(NODES, n["metadata"]["name"], unlabel), labelled))
    cluster.kubectl("apply", "-f", "-", input=chart_tau_cluster())


def reconciled(kube, count: int) -> bool:
    from tau.kube.resources import TAU_CLUSTERS

    obj = kube.get_or_none(TAU_CLUSTERS, "cluster")
    status = (obj or {}).get("status") or {}
    if status.get("observedGeneration") != obj["metadata"]["generation"]:
        return False
    nodes = status.get("nodes") or {}
    return nodes.get("ready", 0) >= count and status.get("phase") == "Ready"


def reaction_times(kube, runs: int) -> list[float]:
    """Seconds from removing one rule label of a node (the API server's answer) until the
    controller has put it back."""
    from tau.kube.resources import NODES

    times = []
    for i in range(runs):
        name = f"bench-h100-{i}"
        kube.patch(NODES, name, {"metadata": {"labels": {GPU_CLASS: None}}})
        started = time.perf_counter()
        while True:
            labels = kube.get(NODES, name)["metadata"].get("labels") or {}
            if labels.get(GPU_CLASS):
                times.append(time.perf_counter() - started)
                break
            if time.perf_counter() - started > 30:
                raise SystemExit(f"node {name}: label {GPU_CLASS} not restored within 30 s")
            time.sleep(0.01)
        time.sleep(1)
    return times


def bench(cluster, count: int, idle_seconds: float, keep_nodes: bool) -> None:
    sys.path.insert(0, str(REPO / "tests" / "e2e"))
    from controller_harness import Controller, install, unique, wait_for

    from tau.kube import KubeClient

    kube = KubeClient(cluster.kubeconfig)
    system = unique("tau-bench")
    install(cluster, system)
    print(f"creating {count} KWOK nodes and the chart's TauCluster...", file=sys.stderr)
    setup(cluster, count)
    with tempfile.TemporaryDirectory() as tmp:
        controller = Controller(cluster, system, Path(tmp))
        try:
            started = time.perf_counter()
            pid = controller.spawn()
            wait_for("/healthz", controller.healthy, interval=0.02)
            startup_cpu = cpu_seconds(pid)
            wait_for("TauCluster Ready", lambda: reconciled(kube, count), timeout=900, interval=0.1)
            total_cpu, wall = cpu_seconds(pid), time.perf_counter() - started
            first = sent(controller)
            rss_first, _ = memory_mb(pid)

            time.sleep(5)  # let the passes the controller's own writes trigger settle
            before, cpu_before = controller.api_requests(), cpu_seconds(pid)
            time.sleep(idle_seconds)
            idle = sent(controller, before)
            idle_cpu = (cpu_seconds(pid) - cpu_before) * 60 / idle_seconds

            before, passes = controller.api_requests(), controller.reconciles("cluster")
            cluster.kubectl(
                "label", "node", "bench-h100-0", f"bench-touch={time.time_ns()}", "--overwrite"
            )
            wait_for("a TauCluster pass", lambda: controller.reconciles("cluster") > passes)
            time.sleep(2)
            noop = sent(controller, before)

            reactions = reaction_times(kube, 5)
            rss, peak = memory_mb(pid)
        finally:
            controller.stop()
    cluster.kubectl("delete", "clusters.tau.azure.com", "cluster", "--ignore-not-found")
    if not keep_nodes:
        cluster.kubectl("delete", "nodes", "-l", BENCH_LABEL, "--wait=false")

    reconcile_cpu = total_cpu - startup_cpu
    cpu_ratio = reconcile_cpu / TARGET_CPU_S
    reaction = statistics.median(reactions)
    print(f"{count} KWOK nodes ({VM_SIZE}), the chart's TauCluster in Reconcile mode")
    print(
        f"first full reconcile: {reconcile_cpu:.2f} s CPU (ratio x{cpu_ratio:.2f} of the"
        f" {TARGET_CPU_S:.0f} s target), {wall:.1f} s wall from exec; start-up before it"
        f" {startup_cpu:.2f} s CPU; sent {describe(first)}"
    )
    print(f"idle: {idle_cpu:.2f} s CPU per minute; sent {describe(idle)} in {idle_seconds:.0f} s")
    print(
        f"no-op pass (an unrelated node label changed): {noop['writes']} writes (target"
        f" {TARGET_WRITES}); sent {describe(noop)}"
    )
    print(
        f"memory: {rss_first:.0f} MB RSS after the first reconcile, {rss:.0f} MB at the end,"
        f" peak {peak:.0f} MB (ratio x{peak / TARGET_RSS_MB:.2f} of {TARGET_RSS_MB} MB)"
    )
    print(
        f"label change repaired in {reaction * 1000:.0f} ms median, {max(reactions) * 1000:.0f}"
        f" ms max of {len(reactions)} (ratio x{reaction / TARGET_REACTION_S:.2f} of"
        f" {TARGET_REACTION_S:.0f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--idle-seconds", type=float, default=60)
    parser.add_argument("--kubeconfig", type=Path, help="admin kubeconfig of a running cluster")
    parser.add_argument(
        "--keep-nodes", action="store_true", help="leave the KWOK nodes for the next run"
    )
    args = parser.parse_args()
    on_cluster(
        args.kubeconfig,
        lambda cluster: bench(cluster, args.nodes, args.idle_seconds, args.keep_nodes),
    )


if __name__ == "__main__":
    main()

"""Benchmark: one `tau run status` refresh for a 2-pod vs a 256-pod Indexed Job
(submit→admitted latency is `bench/submit.py`).

Target (COMPASS): API requests per status refresh independent of pod count. Requests are
counted twice: by the apiserver (`apiserver_request_total` GET/LIST deltas for the
resources status reads, read through the admin client) and by tau's own client. Runs
against the local control plane: an existing one via --kubeconfig (admin), else a fresh
one started for the run.

    python bench/status.py [--runs 5] [--kubeconfig PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchkit import REPO, on_cluster

READ_RESOURCES = {
    "jobs",
    "rayjobs",
    "workloads",
    "admissionchecks",
    "pods",
    "resourceclaims",
    "events",
    "localqueues",
    "workspaces",
    "clusters",
}


def apiserver_reads(cluster) -> int:
    """GET/LIST requests the apiserver has served for the resources status reads."""
    text = cluster.kubectl("get", "--raw", "/metrics").stdout
    total = 0
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = line.split("{", 1)[1].rsplit("}", 1)[0]
        fields = dict(part.split("=", 1) for part in labels.split('",') if "=" in part)
        fields = {k.strip(): v.strip('"') for k, v in fields.items()}
        if fields.get("verb") in ("GET", "LIST") and fields.get("resource") in READ_RESOURCES:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def indexed_job(name: str, namespace: str, pods: int) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"kueue.x-k8s.io/queue-name": "jobqueue", "tau.azure.com/managed-by": "tau"},
        },
        "spec": {
            "suspend": True,
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            "backoffLimit": 0,
            "template": {
                "metadata": {"annotations": {"kwok.tau.azure.com/outcome": "run-forever"}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "example.azurecr.io/bench:1",
                            "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                        }
                    ],
                },
            },
        },
    }


def status_refresh(ws, name: str, runs: int) -> tuple[float, int, int]:
    """(median wall ms of the CLI, apiserver reads per refresh, tau-client reads per refresh)."""
    from tau.kube import KubeClient
    from tau.lifecycle.snapshot import collect

    walls, served = [], []
    for _ in range(runs):
        before = apiserver_reads(ws.cluster)
        started = time.perf_counter()
        result = ws.tau("run", "status", name, "-o", "json")
        walls.append((time.perf_counter() - started) * 1000)
        served.append(apiserver_reads(ws.cluster) - before)
        assert result.returncode == 0, result.stderr
    kube = KubeClient(ws.env["KUBECONFIG"], "research-cluster")
    counted = collect(kube, ws.namespace, name).requests
    return statistics.median(walls), min(served), counted


def bench(cluster, runs: int) -> None:
    sys.path.insert(0, str(REPO / "tests" / "e2e"))
    from lifecycle_env import workspace_setup

    with tempfile.TemporaryDirectory() as tmp:
        setup = workspace_setup(cluster, Path(tmp))
        ws = next(setup)
        try:
            for name, pods in (("bench-2", 2), ("bench-256", 256)):
                cluster.kubectl(
                    "create", "-f", "-", input=json.dumps(indexed_job(name, ws.namespace, pods))
                )

            def started(name: str, pods: int) -> bool:
                job = json.loads(
                    cluster.kubectl("get", "job", name, "-n", ws.namespace, "-o", "json").stdout
                )
                return not job["spec"].get("suspend") and job.get("status", {}).get(
                    "active", 0
                ) + job.get("status", {}).get("ready", 0) >= min(pods, 1)

            for name, pods in (("bench-2", 2), ("bench-256", 256)):
                deadline = time.monotonic() + 180
                while not started(name, pods) and time.monotonic() < deadline:
                    time.sleep(1)
            time.sleep(5)
            print(f"{'status refresh':<22} {'pods':>5} {'wall ms':>8} {'apiserver':>10} {'tau':>5}")
            rows = {}
            for name, pods in (("bench-2", 2), ("bench-256", 256)):
                wall, served, counted = status_refresh(ws, name, runs)
                rows[pods] = (wall, served, counted)
                print(f"{name:<22} {pods:>5} {wall:>8.0f} {served:>10} {counted:>5}")
            print(
                f"256-pod / 2-pod: requests x{rows[256][2] / rows[2][2]:.2f} (tau client), "
                f"x{rows[256][1] / max(rows[2][1], 1):.2f} (apiserver); "
                f"wall x{rows[256][0] / rows[2][0]:.2f}  (target: requests x1.00)"
            )
        finally:
            for name in ("bench-2", "bench-256"):
                cluster.kubectl("delete", "job", name, "-n", ws.namespace, check=False)
            setup.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--kubeconfig", type=Path, help="admin kubeconfig of a running cluster")
    args = parser.parse_args()
    on_cluster(args.kubeconfig, lambda cluster: bench(cluster, args.runs))


if __name__ == "__main__":
    main()

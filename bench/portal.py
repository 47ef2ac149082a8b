"""Benchmark: the Portal's Runs board over 10,000 runs in 20 namespaces.

Targets (issue: the Portal): `/api/portal/runs` and the Runs board page p95 <= 200 ms on this
machine, and API-server requests per page load independent of the number of runs. Runs are
real suspended TauGrid Jobs in the local control plane (no queue label, so Kueue and the
Job controller leave them alone); the Portal runs in this process over its watch cache with
the admin kubeconfig. API-server reads are counted by the API server itself
(`apiserver_request_total` deltas for the types the Portal reads) around the page loads,
and by the Portal's own client.

    python bench/portal.py [--runs 10000] [--namespaces 20] [--loads 50] [--kubeconfig PATH]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_P95_MS = 200.0
READ_RESOURCES = {
    "jobs",
    "rayjobs",
    "pods",
    "events",
    "workloads",
    "nodes",
    "localqueues",
    "clusterqueues",
    "admissionchecks",
}


def apiserver_reads(cluster) -> int:
    text = cluster.kubectl("get", "--raw", "/metrics").stdout
    total = 0
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = line.split("{", 1)[1].rsplit("}", 1)[0]
        fields = dict(part.split("=", 1) for part in labels.split('",') if "=" in part)
        fields = {k.strip(): v.strip('"') for k, v in fields.items()}
        if fields.get("verb") in ("GET", "LIST", "WATCH") and fields.get("resource") in (
            READ_RESOURCES
        ):
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def job(name: str, namespace: str, index: int) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "tau.azure.com/managed-by": "tau",
                "tau.azure.com/run-id": name,
                "tau.azure.com/team": f"team-{index % 7}",
            },
            "annotations": {"tau.azure.com/gpu-count": str(index % 9)},
        },
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "example.azurecr.io/r:1"}],
                }
            },
        },
    }


def populate(cluster, namespaces: list[str], runs: int) -> None:
    for ns in namespaces:
        cluster.kubectl("create", "namespace", ns, check=False)
    batch: list[dict] = []
    for index in range(runs):
        ns = namespaces[index % len(namespaces)]
        batch.append(job(f"run-{index:05d}", ns, index))
        if len(batch) == 500 or index == runs - 1:
            cluster.kubectl(
                "create",
                "-f",
                "-",
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": batch}),
            )
            batch = []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def measure(cluster, namespaces: list[str], loads: int) -> dict:
    import httpx
    import uvicorn

    from tau.kube.informer import CountingClient
    from tau.kube.resources import JOBS
    from tau.portal.web.app import Portal, create_app
    from tau.portal.web.config import PortalConfig

    portal = Portal(
        PortalConfig(namespaces=tuple(namespaces), workspace="bench", cluster="local"),
        CountingClient(str(cluster.kubeconfig)),
    )
    started = time.monotonic()
    portal.start()
    if not portal.cache.wait_synced(600):
        raise SystemExit(f"the Portal's watches did not sync: {portal.cache.status()}")
    sync_seconds = time.monotonic() - started
    # The job controller stamps a Suspended condition on each new Job: measure page loads once
    # those status updates (watch events that rebuild the index) have settled.
    quiet_since, last = time.monotonic(), -1
    while time.monotonic() - quiet_since < 10 and time.monotonic() - started < 900:
        now = portal.cache.generation(JOBS)
        if now != last:
            quiet_since, last = time.monotonic(), now
        time.sleep(1)
    settle_seconds = time.monotonic() - started - sync_seconds
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(portal), host="127.0.0.1", port=port, log_level="warning")
    )
    threading.Thread(target=server.run, daemon=True).start()
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base, timeout=30) as http:
        for _ in range(100):
            try:
                if http.get("/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        total = http.get("/api/portal/runs").json()["total"]
        for _ in range(3):  # warm the row memo and the HTTP path
            http.get("/api/portal/runs")
        time.sleep(2)  # let watch reconnects settle before counting
        client_before, server_before = portal.kube.requests, apiserver_reads(cluster)
        api_ms, page_ms = [], []
        for _ in range(loads):
            t0 = time.perf_counter()
            assert http.get("/api/portal/runs").status_code == 200
            api_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            shell = http.get("/portal/runs")
            data = http.get("/api/portal/runs?limit=500")
            assert shell.status_code == data.status_code == 200
            page_ms.append((time.perf_counter() - t0) * 1000)
        client_delta = portal.kube.requests - client_before
        server_delta = apiserver_reads(cluster) - server_before - 1  # the metrics read itself
    server.should_exit = True
    portal.stop()

    def p95(values: list[float]) -> float:
        return statistics.quantiles(values, n=20)[-1]

    return {
        "runs": total,
        "sync_s": sync_seconds,
        "settle_s": settle_seconds,
        "api_p50": statistics.median(api_ms),
        "api_p95": p95(api_ms),
        "page_p95": p95(page_ms),
        "client_requests_per_load": client_delta / loads,
        "apiserver_reads_per_load": max(server_delta, 0) / loads,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--namespaces", type=int, default=20)
    parser.add_argument("--loads", type=int, default=50)
    parser.add_argument("--kubeconfig", type=Path, help="admin kubeconfig of a local cluster")
    args = parser.parse_args()
    from hack.localcluster import LocalCluster, build, start

    with tempfile.TemporaryDirectory(prefix="bench-portal-") as tmp:
        if args.kubeconfig:
            cluster, owned = LocalCluster.from_kubeconfig(args.kubeconfig), False
        else:
            cluster, owned = start(Path(tmp) / "cluster", build(), tied_to_caller=True), True
        stamp = f"{int(time.time()) % 100000}"
        try:
            results = []
            for runs in (args.runs // 10, args.runs):
                namespaces = [f"bench-portal-{stamp}-{runs}-{i}" for i in range(args.namespaces)]
                t0 = time.monotonic()
                populate(cluster, namespaces, runs)
                print(
                    f"created {runs} Jobs in {len(namespaces)} namespaces in "
                    f"{time.monotonic() - t0:.0f}s",
                    file=sys.stderr,
                )
                results.append(measure(cluster, namespaces, args.loads))
                for ns in namespaces:
                    cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
        finally:
            if owned:
                cluster.stop()
    print(
        f"{'runs':>7} {'sync s':>7} {'settle s':>9} {'api p50':>8} {'api p95':>8} {'page p95':>9} "
        f"{'client req/load':>16} {'apiserver reads/load':>21}"
    )
    for r in results:
        print(
            f"{r['runs']:>7} {r['sync_s']:>7.1f} {r['settle_s']:>9.1f} "
            f"{r['api_p50']:>8.1f} {r['api_p95']:>8.1f} "
            f"{r['page_p95']:>9.1f} {r['client_requests_per_load']:>16.2f} "
            f"{r['apiserver_reads_per_load']:>21.2f}"
        )
    small, large = results
    print(
        f"\n/api/portal/runs p95 at {large['runs']} runs: {large['api_p95']:.0f} ms = "
        f"{large['api_p95'] / TARGET_P95_MS:.2f}x the {TARGET_P95_MS:.0f} ms target; "
        f"Runs board page p95 {large['page_p95'] / TARGET_P95_MS:.2f}x"
    )
    print(
        f"API-server reads per page load: {small['apiserver_reads_per_load']:.2f} at "
        f"{small['runs']} runs, {large['apiserver_reads_per_load']:.2f} at {large['runs']} "
        "runs (independent of the number of runs when both are ~0)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: `tau run list` over 1,000 runs vs `kubectl get jobs`, and the API requests of
`tau run status --watch` on an idle run.

A controller-Ready workspace on the local control plane gets `--jobs` Jobs carrying tau's
labels, suspended and outside Kueue (no queue label), so they create no pods and no
Workloads and do not load the machine. Then, as the workspace's researcher, interleaved:
`tau run list` vs `kubectl get jobs -n NS` (both tables), and `-o json` of each; medians of
wall and CPU time, ratio against the 1.5x target. Last, one `tau run status --watch
--interval 2s --max-iterations N` of an idle run (N refreshes = `--watch-seconds`), traced
(every HTTP exchange counted, see `tests/e2e/tau_cli.py`): the requests it sent, against
the refreshes it drew.

    python bench/list.py [--runs 9] [--jobs 1000] [--watch-seconds 60] [--kubeconfig ADMIN]
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

from benchkit import REPO, compile_tau, on_cluster, timed


def run_job(name: str, namespace: str) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"tau.azure.com/job": name, "tau.azure.com/run-id": f"{name}-r1"},
        },
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "example.azurecr.io/bench:1"}],
                }
            },
        },
    }


def bench(cluster, runs: int, jobs: int, watch_seconds: float) -> None:
    sys.path.insert(0, str(REPO / "tests" / "e2e"))
    from lifecycle_env import workspace_setup
    from tau_cli import TRACED, traced_requests

    from tau.kube import KubeClient
    from tau.kube.resources import JOBS

    compile_tau()
    tau = str(Path(sys.executable).parent / "tau")
    kubectl = str(cluster.bin_dir / "kubectl")
    admin = KubeClient(cluster.kubeconfig)
    with tempfile.TemporaryDirectory() as tmp:
        setup = workspace_setup(cluster, Path(tmp))
        ws = next(setup)
        env = {**ws.env, "HOME": str(Path(tmp) / "home")}  # kubectl's own discovery cache
        try:
            started = time.monotonic()
            with ThreadPoolExecutor(4) as pool:
                list(
                    pool.map(
                        lambda i: admin.create(JOBS, run_job(f"run-{i:04d}", ws.namespace)),
                        range(jobs),
                    )
                )
            print(f"created {jobs} suspended Jobs in {time.monotonic() - started:.0f}s")
            commands = {
                "table": ([tau, "run", "list"], [kubectl, "get", "jobs", "-n", ws.namespace]),
                "json": (
                    [tau, "run", "list", "-o", "json"],
                    [kubectl, "get", "jobs", "-n", ws.namespace, "-o", "json"],
                ),
            }
            listed = json.loads(timed(commands["json"][0], cwd=ws.repo, env=env).stdout)
            if listed["total"] != jobs:
                raise SystemExit(f"tau run list shows {listed['total']} runs, not {jobs}")
            for tau_cmd, kubectl_cmd in commands.values():  # warm-up
                timed(tau_cmd, cwd=ws.repo, env=env)
                timed(kubectl_cmd, cwd=ws.repo, env=env)
            print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
            print(
                f"{'output':<8} {'tau ms':>8} {'kubectl ms':>11} {'wall x':>7} "
                f"{'tau cpu':>8} {'kubectl cpu':>12} {'cpu x':>6}"
            )
            for label, (tau_cmd, kubectl_cmd) in commands.items():
                rows: dict[str, list[tuple[float, float]]] = {"tau": [], "kubectl": []}
                for _ in range(runs):
                    for tool, cmd in (("tau", tau_cmd), ("kubectl", kubectl_cmd)):
                        run = timed(cmd, cwd=ws.repo, env=env)
                        rows[tool].append((run.wall, run.cpu))
                wall = {t: statistics.median(r[0] for r in rows[t]) * 1000 for t in rows}
                cpu = {t: statistics.median(r[1] for r in rows[t]) * 1000 for t in rows}
                print(
                    f"{label:<8} {wall['tau']:>8.0f} {wall['kubectl']:>11.0f} "
                    f"{wall['tau'] / wall['kubectl']:>6.2f}x {cpu['tau']:>8.0f} "
                    f"{cpu['kubectl']:>12.0f} {cpu['tau'] / cpu['kubectl']:>5.2f}x"
                )
            print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
            print("(target: tau run list / kubectl get jobs <= 1.5)")
            watch_idle(ws, env, TRACED, traced_requests, watch_seconds)
        finally:
            subprocess.run(
                [kubectl, f"--kubeconfig={cluster.kubeconfig}", "delete", "jobs", "--all",
                 "-n", ws.namespace, "--wait=false"],
                capture_output=True, check=False,
            )  # fmt: skip
            setup.close()


def watch_idle(ws, env: dict[str, str], traced: str, requests_of, seconds: float) -> None:
    """Requests of `tau run status --watch` over about `seconds` of an idle run (run-0000):
    nothing changes it, so every refresh waits its full 2 s interval."""
    refreshes = max(1, int(seconds / 2))
    cmd = [sys.executable, "-c", traced, "run", "status", "run-0000", "--watch"]
    cmd += ["--interval", "2s", "--max-iterations", str(refreshes)]
    started = time.perf_counter()
    watcher = subprocess.run(cmd, cwd=ws.repo, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if watcher.returncode != 0:
        raise SystemExit(f"tau run status --watch failed: {watcher.stderr}")
    drawn = watcher.stdout.count(f"watching {ws.namespace}/run-0000 every 2s")
    sent = requests_of(watcher.stderr)
    watches = sum("watch=1" in request for request in sent)
    print(
        f"tau run status --watch --interval 2s, idle run, {elapsed:.0f}s: {drawn} refreshes, "
        f"{len(sent)} requests ({len(sent) - watches} LIST, {watches} WATCH); re-reading the "
        f"snapshot at every refresh would send {7 * drawn}+"
    )
    for request in sent:
        print(f"    {request}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--watch-seconds", type=float, default=60)
    parser.add_argument("--kubeconfig", type=Path, help="admin kubeconfig of a running cluster")
    args = parser.parse_args()
    on_cluster(
        args.kubeconfig,
        lambda cluster: bench(cluster, args.runs, args.jobs, args.watch_seconds),
    )


if __name__ == "__main__":
    main()

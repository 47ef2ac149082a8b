"""Benchmark: submit → admitted, `tau run TARGET` vs `kubectl create -f` of the rendered Job.

Both submit the same Job (kubectl gets tau's own `--dry-run=client` output, renamed) as the
same researcher identity into the same namespace and LocalQueue of a controller-Ready
workspace on the local control plane; the clock runs from command start until Kueue
unsuspends the Job (seen through one admin watch, so the bench itself polls nothing).
Target: tau / kubectl ≤ 1.5 (median). It also prints the requests each command sends:
tau's, counted inside a separate traced invocation (one line per HTTP exchange), with fresh
readiness evidence (a submission within 5 minutes of the last verification) and with stale
evidence (the connection is re-verified first); kubectl's from its `-v=6` request log. The
traced invocation is the e2e suites' (`tests/e2e/tau_cli.py`).

    python bench/submit.py [--runs 9] [--kubeconfig ADMIN_KUBECONFIG]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchkit import REPO, Timed, compile_tau, on_cluster, timed

KUBECTL_REQUEST = re.compile(
    r'verb="(GET|POST|PUT|PATCH|DELETE)" url="([^"?]+)|(GET|POST) (https://\S+)'
)


class Admissions:
    """When each Job of the namespace was first seen unsuspended (one LIST + WATCH)."""

    def __init__(self, kubeconfig: Path, namespace: str) -> None:
        from tau.kube import KubeClient
        from tau.kube.informer import Informer
        from tau.kube.resources import JOBS

        self.seen: dict[str, float] = {}
        self.changed = threading.Condition()
        self.informer = Informer(KubeClient(kubeconfig), JOBS, namespace, on_change=self._change)
        self.informer.start()
        if not self.informer.synced.wait(60):
            raise SystemExit("the admin watch on Jobs did not sync within 60s")

    def _change(self, _kind: str, job: dict) -> None:
        name = job["metadata"]["name"]
        if (job.get("spec") or {}).get("suspend") is False and name not in self.seen:
            with self.changed:
                self.seen[name] = time.perf_counter()
                self.changed.notify_all()

    def wait(self, name: str, timeout: float = 120) -> float:
        with self.changed:
            if not self.changed.wait_for(lambda: name in self.seen, timeout):
                raise SystemExit(f"Job {name} was not admitted within {timeout:.0f}s")
            return self.seen[name]


def age_evidence(config_dir: Path) -> None:
    """Make the connection's readiness evidence 6 minutes old, so the next command
    re-verifies the workspace connection (the path of a first submission of the day)."""
    stale = (datetime.now(UTC) - timedelta(minutes=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for path in (config_dir / "connections").glob("*.json"):
        state = json.loads(path.read_text())
        state["verified_at"] = stale
        path.write_text(json.dumps(state, indent=2))


def kubectl_requests(stderr: str) -> list[str]:
    found = []
    for match in KUBECTL_REQUEST.finditer(stderr):
        verb, url = (match.group(1), match.group(2)) if match.group(1) else match.group(3, 4)
        found.append(f"{verb} {re.sub(r'^https://[^/]+', '', url)}")
    return found


def bench(cluster, runs: int) -> None:
    sys.path.insert(0, str(REPO / "tests" / "e2e"))
    from lifecycle_env import job_target, workspace_setup
    from tau_cli import TRACED, traced_requests

    from tau.kube import KubeClient
    from tau.kube.deletion import delete
    from tau.kube.resources import JOBS

    compile_tau()
    tau = str(Path(sys.executable).parent / "tau")
    kubectl = str(cluster.bin_dir / "kubectl")
    admin = KubeClient(cluster.kubeconfig)
    with tempfile.TemporaryDirectory() as tmp:
        setup = workspace_setup(cluster, Path(tmp))
        ws = next(setup)
        admissions = Admissions(cluster.kubeconfig, ws.namespace)
        # kubectl's discovery cache lives under $HOME: a private one, warmed below.
        env = {**ws.env, "HOME": str(Path(tmp) / "home")}
        created: list[str] = []

        def submit_tau(name: str, *, traced: bool = False) -> Timed:
            ws.target(name, job_target(name))
            cmd = [sys.executable, "-c", TRACED, "run", name] if traced else [tau, "run", name]
            created.append(name)
            return timed(cmd, cwd=ws.repo, env=env)

        def submit_kubectl(name: str, *, verbose: bool = False) -> Timed:
            template = f"bench-render-{name}"
            ws.target(template, job_target(template))
            rendered = subprocess.run(
                [tau, "run", template, "--dry-run=client"],
                cwd=ws.repo, env=env, capture_output=True, text=True, check=True,
            ).stdout.replace(template, name)  # fmt: skip
            created.append(name)
            cmd = [kubectl, "create", "-f", "-"] + (["-v=6"] if verbose else [])
            return timed(cmd, cwd=ws.repo, env=env, stdin=rendered)

        def settle(name: str) -> None:
            admissions.wait(name)
            delete(admin, JOBS, name, ws.namespace)  # with its pods and Workload: frees the quota

        try:
            for i in range(2):  # warm-up: page cache, kubectl discovery cache, TLS session
                submit_tau(f"warm-tau-{i}")
                settle(f"warm-tau-{i}")
                submit_kubectl(f"warm-kc-{i}")
                settle(f"warm-kc-{i}")
            rows: dict[str, list[tuple[float, float, float]]] = {"tau": [], "kubectl": []}
            for i in range(runs):
                for tool, submit in (("tau", submit_tau), ("kubectl", submit_kubectl)):
                    name = f"sub-{tool}-{i:02d}"
                    run = submit(name)
                    rows[tool].append((admissions.wait(name) - run.started, run.wall, run.cpu))
                    settle(name)
            traced = {}
            for label, stale in (("fresh evidence", False), ("stale evidence", True)):
                if stale:
                    age_evidence(Path(env["TAU_CONFIG_DIR"]))
                name = f"req-tau-{'stale' if stale else 'fresh'}"
                traced[label] = traced_requests(submit_tau(name, traced=True).stderr)
                settle(name)
            kubectl_sent = kubectl_requests(submit_kubectl("req-kc", verbose=True).stderr)
            settle("req-kc")
        finally:
            for name in created:
                delete(admin, JOBS, name, ws.namespace)
            admissions.informer.stop()
            setup.close()

    def median(tool: str, column: int) -> float:
        return statistics.median(row[column] for row in rows[tool])

    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"medians of {runs} interleaved runs   {'tau run':>9} {'kubectl':>9} {'ratio':>7}")
    for label, column in (
        ("submit -> admitted ms", 0),
        ("command wall ms", 1),
        ("command CPU ms", 2),
    ):
        tau_ms, kubectl_ms = median("tau", column) * 1000, median("kubectl", column) * 1000
        print(f"{label:<34} {tau_ms:>9.0f} {kubectl_ms:>9.0f} {tau_ms / kubectl_ms:>6.2f}x")
    ratio = median("tau", 0) / median("kubectl", 0)
    print(f"submit -> admitted: tau/kubectl x{ratio:.2f} (target <= 1.50)")
    for label, sent in (*traced.items(), ("kubectl create", kubectl_sent)):
        print(f"requests, {label}: {len(sent)}")
        for line in sent:
            print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--kubeconfig", type=Path, help="admin kubeconfig of a running cluster")
    args = parser.parse_args()
    on_cluster(args.kubeconfig, lambda cluster: bench(cluster, args.runs))


if __name__ == "__main__":
    main()

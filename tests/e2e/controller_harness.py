"""Run the tau-core controller as a real process against the local control plane.

The controller authenticates as its chart ServiceAccount identity (a client certificate for
`system:serviceaccount:<ns>:tau-core-controller`) and is authorized only by the chart's own
RBAC, rendered with the real helm; so these tests also prove the chart grants enough.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "taugrid" / "charts" / "tau-core-controller"
CRD_DIR = CHART / "crds"


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 60, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def chart_rbac(system_namespace: str) -> list[dict[str, Any]]:
    """The chart's ClusterRoles and controller RBAC, with bindings unique to this test run."""
    rendered = subprocess.run(
        [
            _helm(),
            "template",
            "tau-core-controller",
            str(CHART),
            "--namespace",
            system_namespace,
            "--show-only",
            "templates/rbac.yaml",
            "--show-only",
            "templates/clusterroles.yaml",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    objects = [doc for doc in yaml.safe_load_all(rendered) if doc]
    for obj in objects:
        if obj["kind"] == "ClusterRoleBinding":
            obj["metadata"]["name"] += f"-{system_namespace}"
    return objects


class Controller:
    """One `python -m tau.controller` process; `restart()` kills it hard and starts anew.
    `args` are further controller flags, such as the ones the chart renders from its values."""

    def __init__(
        self, cluster: Any, system_namespace: str, workdir: Path, args: tuple[str, ...] = ()
    ) -> None:
        self.cluster = cluster
        self.system_namespace = system_namespace
        self.workdir = workdir
        self.args = args
        self.health_port = free_port()
        self.metrics_port = free_port()
        identity = f"system:serviceaccount:{system_namespace}:tau-core-controller"
        self.kubeconfig = cluster.mint_kubeconfig(
            identity,
            ["system:serviceaccounts", f"system:serviceaccounts:{system_namespace}"],
            path=workdir / "controller.kubeconfig",
        )
        self.log = workdir / "controller.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.spawn()
        wait_for(f"controller /readyz (log: {self.log})", self.ready, timeout=60)

    def spawn(self) -> int:
        """Start the process without waiting for it; its pid."""
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig)}
        env.pop("KUBERNETES_SERVICE_HOST", None)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tau.controller",
                    "--system-namespace",
                    self.system_namespace,
                    "--health-probe-bind-address",
                    f"127.0.0.1:{self.health_port}",
                    "--metrics-bind-address",
                    f"127.0.0.1:{self.metrics_port}",
                    "--leader-elect",
                    *self.args,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.workdir,
            )
        return self.process.pid

    def _get(self, port: int, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as reply:
                return reply.status, reply.read().decode()
        except OSError:
            return 0, ""

    def ready(self) -> bool:
        assert self.process and self.process.poll() is None, self.log.read_text()[-3000:]
        return self._get(self.health_port, "/readyz")[0] == 200 and self.leading()

    def healthy(self) -> bool:
        return self._get(self.health_port, "/healthz")[0] == 200

    def leading(self) -> bool:
        return "tau_controller_leader 1" in self._get(self.metrics_port, "/metrics")[1]

    def reconciles(self, kind: str) -> int:
        for line in self._get(self.metrics_port, "/metrics")[1].splitlines():
            if line.startswith(f'tau_controller_reconciles_total{{kind="{kind}"}}'):
                return int(line.split()[-1])
        return 0

    def api_requests(self) -> dict[tuple[str, str], int]:
        """`tau_controller_api_requests_total` by (verb, resource)."""
        counts = {}
        for line in self._get(self.metrics_port, "/metrics")[1].splitlines():
            if line.startswith("tau_controller_api_requests_total{"):
                labels = dict(
                    part.split("=", 1) for part in line.split("{", 1)[1].split("}", 1)[0].split(",")
                )
                counts[(labels["verb"].strip('"'), labels["resource"].strip('"'))] = int(
                    line.split()[-1]
                )
        return counts

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


def chart_controller_args(*sets: str) -> list[str]:
    """The controller flags the chart's Deployment renders from `--set` values, minus the ones
    this harness sets itself (namespace, probes, leader election)."""
    rendered = subprocess.run(
        [
            _helm(),
            "template",
            "tau-core-controller",
            str(CHART),
            "--show-only",
            "templates/deployment.yaml",
            *(arg for item in sets for arg in ("--set", item)),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    [container] = yaml.safe_load(rendered)["spec"]["template"]["spec"]["containers"]
    own = ("--system-namespace", "--leader-elect", "--health-probe", "--metrics-bind")
    return [arg for arg in container["args"] if not arg.startswith(own)]


def _helm() -> str:
    helm = shutil.which("helm")
    assert helm, "helm is not on PATH (hack/setup installs it into .venv/bin)"
    return helm


def install(cluster: Any, system_namespace: str) -> None:
    """The generated CRDs, the system namespace and the chart's RBAC."""
    cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(CRD_DIR))
    for crd in ("clusters", "workspaces", "quotarequests"):
        cluster.kubectl(
            "wait", "--for=condition=Established", f"crd/{crd}.tau.azure.com", "--timeout=60s"
        )
    cluster.apply(
        [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": system_namespace}}]
    )
    cluster.apply(chart_rbac(system_namespace))


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def get(cluster: Any, *args: str) -> dict[str, Any] | None:
    result = cluster.kubectl("get", *args, "-o", "json", check=False)
    if result.returncode != 0:
        if "NotFound" in result.stderr or "not found" in result.stderr:
            return None
        raise AssertionError(result.stderr)
    return json.loads(result.stdout)


def items(cluster: Any, *args: str) -> list[dict[str, Any]]:
    return (get(cluster, *args) or {}).get("items") or []


def condition(obj: dict[str, Any] | None, type_: str) -> tuple[str, str]:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond["type"] == type_:
            return cond["status"], cond["reason"]
    return "", ""

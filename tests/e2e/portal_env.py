"""The Portal and the lifecycle recorder as processes with the chart's own RBAC.

The chart is rendered with real helm; its Portal (or recorder) ServiceAccount, Roles and
ClusterRoles are applied to the local control plane, a token is requested for that
ServiceAccount, and `taugrid-portal portal serve` / `tau run history record` run with a
kubeconfig holding only that token. What the boards show is therefore exactly what the
chart's RBAC lets the Portal read.
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
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx
from tau.cluster.chart import ChartRef, renderable
from tau.evidence import init_experiment

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "taugrid"
BIN = Path(sys.executable).parent
OFFLINE = ["components.kueue.enabled=false", "components.kuberayOperator.enabled=false"]
RBAC_KINDS = ("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")


def helm() -> str:
    found = shutil.which("helm") or str(BIN / "helm")
    if not Path(found).is_file():
        raise AssertionError("helm is not installed: run hack/setup/10-helm.sh")
    return found


def render(release_namespace: str, *sets: str) -> list[dict[str, Any]]:
    args = [helm(), "template", "t", "", "--namespace", release_namespace]
    for item in [*OFFLINE, *sets]:
        args += ["--set", item]
    with renderable(ChartRef(str(CHART))) as chart:
        args[3] = chart
        done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"helm template failed: {done.stderr.strip()}")
    return [d for d in yaml.safe_load_all(done.stdout) if isinstance(d, dict) and d.get("kind")]


def token_kubeconfig(cluster: LocalCluster, namespace: str, account: str, path: Path) -> Path:
    """A kubeconfig authenticating as the ServiceAccount by a requested token."""
    token = cluster.kubectl(
        "create", "token", account, "-n", namespace, "--duration=3h"
    ).stdout.strip()
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    [entry] = admin["clusters"]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": entry["cluster"]}],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "local", "user": account}}],
        "current-context": "sa",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def can_i(kubeconfig: Path, cluster: LocalCluster, *args: str) -> bool:
    done = subprocess.run(
        [str(cluster.bin_dir / "kubectl"), "--kubeconfig", str(kubeconfig), "auth", "can-i", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() == "yes"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Process:
    process: subprocess.Popen[str]
    log: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def spawn(args: list[str], log: Path, env: dict[str, str] | None = None) -> Process:
    handle = log.open("w")
    process = subprocess.Popen(
        args,
        stdout=handle,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        text=True,
    )
    return Process(process, log)


@dataclass
class PortalServer:
    url: str
    kubeconfig: Path
    proc: Process
    release_namespace: str

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30, **kwargs)

    def json(self, path: str) -> dict[str, Any]:
        response = self.get(path)
        assert response.status_code == 200, f"{path}: {response.status_code} {response.text}"
        return response.json()


def start_portal(
    cluster: LocalCluster,
    tmp: Path,
    *,
    release_namespace: str,
    workload_namespace: str,
    workspace: str,
    store: Path,
    extra_sets: tuple[str, ...] = (),
    extra_args: tuple[str, ...] = (),
) -> Iterator[PortalServer]:
    """Apply the chart's Portal RBAC and run the Portal with its ServiceAccount token."""
    cluster.kubectl("create", "namespace", release_namespace, check=False)
    objects = render(
        release_namespace,
        f"taugrid-core.portal.workloadNamespace={workload_namespace}",
        f"taugrid-core.portal.workspace={workspace}",
        "taugrid-core.portal.jobs.scopeMode=workspace",
        *extra_sets,
    )
    rbac = [
        o
        for o in objects
        if o["kind"] in RBAC_KINDS
        and (o["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "portal"
    ]
    cluster.apply(rbac)
    kubeconfig = token_kubeconfig(
        cluster, release_namespace, "tau-portal", tmp / "portal.kubeconfig"
    )
    port = free_port()
    args = [
        str(BIN / "taugrid-portal"),
        "portal",
        "serve",
        "--addr",
        f"127.0.0.1:{port}",
        "--kubeconfig",
        str(kubeconfig),
        "-n",
        workload_namespace,
        "--workspace",
        workspace,
        "--cluster",
        "local",
        "--store",
        str(store),
        "--jobs-scope-mode",
        "workspace",
        *extra_args,
    ]
    proc = spawn(args, tmp / "portal.log")
    server = PortalServer(f"http://127.0.0.1:{port}", kubeconfig, proc, release_namespace)
    deadline = time.monotonic() + 90
    try:
        while True:
            if proc.process.poll() is not None:
                raise AssertionError(f"the Portal exited: {proc.output()}")
            try:
                if server.get("/readyz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the Portal never became ready: {proc.output()}")
            time.sleep(0.5)
        yield server
    finally:
        proc.stop()
        cleanup = [o for o in rbac if not o["metadata"].get("namespace")]
        for obj in cleanup:
            cluster.kubectl("delete", obj["kind"].lower(), obj["metadata"]["name"], check=False)


def start_recorder(
    cluster: LocalCluster,
    tmp: Path,
    *,
    release_namespace: str,
    target_namespace: str,
    store: Path,
    workspace: str,
    name: str = "recorder",
) -> Process:
    """The recorder with the chart's metadata-only Role, writing to the store."""
    cluster.kubectl("create", "namespace", release_namespace, check=False)
    objects = render(
        release_namespace,
        "taugrid-core.lifecycleRecorder.enabled=true",
        f"taugrid-core.lifecycleRecorder.targetNamespace={target_namespace}",
        "taugrid-core.lifecycleRecorder.cluster=local",
        "taugrid-core.lifecycleRecorder.storeClaim=unused",
    )
    rbac = [
        o
        for o in objects
        if o["kind"] in RBAC_KINDS and "lifecycle-recorder" in o["metadata"]["name"]
    ]
    cluster.apply(rbac)
    kubeconfig = tmp / "recorder.kubeconfig"
    if not kubeconfig.exists():
        token_kubeconfig(cluster, release_namespace, "tau-lifecycle-recorder", kubeconfig)
    args = [
        str(BIN / "tau"),
        "run",
        "history",
        "record",
        "-n",
        target_namespace,
        "--cluster",
        "local",
        "--workspace-id",
        workspace,
        "--store",
        str(store),
        "--interval",
        "2s",
        "--health-addr",
        f"127.0.0.1:{free_port()}",
        "--kubeconfig",
        str(kubeconfig),
    ]
    return spawn(args, tmp / f"{name}.log")


TAU = str(BIN / "tau")


@dataclass
class Scene:
    cluster: LocalCluster
    namespace: str
    workspace: str
    store: Path
    portal: PortalServer
    tmp: Path

    def status(self, name: str) -> dict[str, Any]:
        """`tau run status -o json` as the admin, for comparison with the run page."""
        done = subprocess.run(
            [TAU, "run", "status", name, "-n", self.namespace, "-o", "json"],
            env={
                **os.environ,
                "KUBECONFIG": str(self.cluster.kubeconfig),
                "TAU_CONFIG_DIR": str(self.tmp / "tau-config"),
            },
            capture_output=True,
            text=True,
            check=False,
            cwd=self.tmp,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


def tau_job(name: str, namespace: str, *, gpus: int = 0, team: str = "vision") -> dict:
    resources = {"cpu": "1", "memory": "1Gi"} | ({fx.GPU_RESOURCE: str(gpus)} if gpus else {})
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "tau.azure.com/managed-by": "tau",
                "tau.azure.com/run-id": name,
                "tau.azure.com/team": team,
                fx.KUEUE_QUEUE_LABEL: "jobqueue",
            },
        },
        "spec": {
            "suspend": True,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "tolerations": [fx.GPU_TOLERATION] if gpus else [],
                    "containers": [
                        {
                            "name": "main",
                            "image": "example.azurecr.io/r:1",
                            "resources": {"requests": resources, "limits": resources},
                        }
                    ],
                }
            },
        },
    }


@pytest.fixture(scope="module")
def scene(local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    tmp = tmp_path_factory.mktemp("portal")
    suffix = uuid.uuid4().hex[:5]
    namespace, release = f"e2e-portal-{suffix}", f"e2e-portal-sys-{suffix}"
    local_cluster.kubectl("create", "namespace", namespace)
    local_cluster.apply(
        [
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "jobqueue", "namespace": namespace},
                "spec": {"clusterQueue": fx.CLUSTER_QUEUE},
            }
        ]
    )
    store = tmp / "store"
    init_experiment(store, "portal-demo", project="demo")
    portal = start_portal(
        local_cluster,
        tmp,
        release_namespace=release,
        workload_namespace=namespace,
        workspace="shared-research",
        store=store,
        extra_sets=("taugrid-core.portal.runHistory.enabled=true",),
        extra_args=("--run-history-enabled",),
    )
    server = next(portal)
    try:
        yield Scene(local_cluster, namespace, "shared-research", store, server, tmp)
    finally:
        next(portal, None)
        local_cluster.kubectl(
            "delete", "namespace", namespace, release, "--wait=false", check=False
        )

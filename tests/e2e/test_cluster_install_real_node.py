"""`tau cluster install --chart charts/taugrid` installs this project's software for real.

The images are built from docker/ by this checkout and pushed to the local cluster's registry;
the chart points at them with its one registry value and digests, and places the controller and
the Portal on the real kubelet node. Nothing runs beside the test: the controller that turns the
TauCluster NodesReady and makes a workspace Ready is the pod the chart started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from controller_harness import get, unique, wait_for
from installed_checks import installation_report, installation_suite_runs_in_the_controller
from test_cluster_lifecycle import RELEASE_CLUSTER_OBJECTS

from hack.images import ImageRef
from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx
from tau import __version__
from tau.controller.leader import LEASE_NAME

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "taugrid"
ON_THE_REAL_NODE = {
    "nodeSelector": dict(fx.REAL_NODE_SELECTOR),
    "tolerations": [dict(fx.REAL_NODE_TOLERATION)],
}


@dataclass
class Release:
    cluster: LocalCluster
    images: dict[str, ImageRef]
    name: str
    namespace: str
    env: dict[str, str]
    install: subprocess.CompletedProcess[str] | None = None

    def tau(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tau", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            env=self.env,
            stdin=subprocess.DEVNULL,
        )

    def scope(self) -> list[str]:
        return ["--release", self.name, "--namespace", self.namespace]

    def pods(self, app: str) -> list[dict]:
        listed = get(
            self.cluster, "pods", "-n", self.namespace, "-l", f"app.kubernetes.io/name={app}"
        )
        return (listed or {}).get("items") or []


def values(cluster: LocalCluster, images: dict[str, ImageRef], queue: str) -> dict:
    return {
        "global": {"imageRegistry": cluster.registry},
        "components": {"kueue": {"enabled": False}, "kuberayOperator": {"enabled": False}},
        "baselineQueue": {
            "name": queue,
            "flavor": {"name": f"{queue}-cpu"},
            "topology": {"name": f"{queue}-topo"},
            # The local cluster's baseline already defines taugrid-default/-priority.
            "priorityClasses": {"enabled": False},
            "gpu": {
                "flavors": [
                    {
                        "name": f"{queue}-h200",
                        "nodeLabels": {fx.GPU_CLASS_LABEL: fx.GPU_CLASS_H200},
                        "nodeTaints": [fx.GPU_TAINT],
                        "resources": [{"name": fx.GPU_RESOURCE, "nominalQuota": "16"}],
                    }
                ]
            },
        },
        "tau-core-controller": {
            "image": {"digest": images["controller"].digest},
            **ON_THE_REAL_NODE,
        },
        "taugrid-core": {
            "portal": {"image": {"digest": images["portal"].digest}, **ON_THE_REAL_NODE}
        },
    }


@pytest.fixture(scope="module")
def release(
    local_cluster: LocalCluster,
    local_images: dict[str, ImageRef],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Release]:
    for resource, name in RELEASE_CLUSTER_OBJECTS:
        local_cluster.kubectl("delete", resource, name, "--ignore-not-found", check=False)
    tmp = tmp_path_factory.mktemp("install-real-node")
    path = os.pathsep.join([str(local_cluster.bin_dir), os.environ["PATH"]])
    env = {**os.environ, "KUBECONFIG": str(local_cluster.kubeconfig), "PATH": path}
    env["TAU_CONFIG_DIR"] = str(tmp / "tau-config")
    rel = Release(local_cluster, local_images, unique("tau-real"), unique("tau-real-sys"), env)
    values_file = tmp / "values.yaml"
    values_file.write_text(
        yaml.safe_dump(values(local_cluster, local_images, unique("tau-real-q")))
    )
    try:
        rel.install = rel.tau(
            "cluster",
            "install",
            "--chart",
            str(CHART),
            *rel.scope(),
            "-f",
            str(values_file),
            "--timeout",
            "8m",
        )
        yield rel
    finally:
        rel.tau("cluster", "uninstall", "--chart", str(CHART), *rel.scope(), "--yes")
        local_cluster.kubectl("delete", "namespace", rel.namespace, "--wait=false", check=False)


def test_install_prints_the_chart_version_and_our_images_then_ends_ready(release: Release):
    done = release.install
    assert done is not None and done.returncode == 0, done.stderr + done.stdout
    plan = done.stderr
    assert f"  chart:       {CHART}" in plan
    assert f"  version:     {__version__} (local chart)" in plan
    for name in ("controller", "portal"):
        assert f"    {release.images[name].reference}  (" in plan, plan
    assert plan.index("  images:") < plan.index("main pass")
    assert "READY:" in done.stdout and "checks passed" in done.stdout


def test_the_controller_and_portal_run_from_our_images_on_the_real_node(release: Release):
    for app, image in (("tau-core-controller", "controller"), ("tau-portal", "portal")):
        [pod] = release.pods(app)
        assert pod["spec"]["nodeName"] == fx.REAL_NODE, app
        assert pod["status"]["phase"] == "Running", app
        for status in pod["status"]["containerStatuses"]:
            assert status["ready"], (app, status)
            assert status["imageID"].endswith(release.images[image].digest), (app, status)
    # The pod leads: its hostname (the pod name) holds the controller's Lease.
    [controller] = release.pods("tau-core-controller")

    def holder() -> str:
        lease = get(release.cluster, "lease", LEASE_NAME, "-n", release.namespace) or {}
        return (lease.get("spec") or {}).get("holderIdentity", "")

    wait_for(
        "the controller pod to hold the Lease",
        lambda: holder().startswith(f"{controller['metadata']['name']}_"),
        timeout=60,
    )


def test_validate_installation_is_ready(release: Release):
    installation_report(
        release.tau,
        release.scope(),
        {
            "Kubernetes": "PASS",
            "Kueue": "SKIP",
            "KubeRay": "SKIP",
            "Portal": "PASS",
            "Tau controller": "PASS",
            "TauCluster": "PASS",
            "Baseline queue": "PASS",
            "Quota guard": "PASS",
        },
    )


def test_validate_installation_runs_an_operator_suite_in_the_controller(
    release: Release, tmp_path: Path
):
    installation_suite_runs_in_the_controller(release.tau, release.scope(), tmp_path / "site")


def test_the_in_cluster_controller_makes_a_created_workspace_ready(release: Release):
    name = unique("real-ws")
    created = release.tau(
        "workspace",
        "create",
        name,
        "--principal-name",
        "ml-researchers",
        "--system-namespace",
        release.namespace,
        "--apply",
    )
    assert created.returncode == 0, created.stderr + created.stdout

    def ready() -> dict | None:
        obj = get(release.cluster, "workspaces.tau.azure.com", name, "-n", release.namespace)
        return obj if ((obj or {}).get("status") or {}).get("phase") == "Ready" else None

    try:
        workspace = wait_for("the TauWorkspace Ready (in-cluster controller)", ready, 120)
        assert get(release.cluster, "namespace", name) is not None
        queue = get(release.cluster, "localqueues.kueue.x-k8s.io", "-n", name)
        assert [q["metadata"]["name"] for q in (queue or {}).get("items", [])] == ["jobqueue"]
        assert workspace["status"]["phase"] == "Ready"
    finally:
        release.cluster.kubectl(
            "delete", "workspaces.tau.azure.com", name, "-n", release.namespace, "--wait=false"
        )

"""The `dev` stack on the real Pulumi engine against the local control plane.

`python -m infra.automation` runs the stack program with the engine and the Kubernetes provider
built by hack/setup/60-pulumi.sh (their absence fails this module: it never skips), in a
throwaway local backend and Pulumi home, so the provider that runs is the one on PATH. One
`up` installs `charts/taugrid` with this checkout's images (by digest, from the cluster's
registry) and the bootstrap workspace; then a second preview must show no changes, `tau
cluster validate installation` must report the release ready (and run an operator's testinfra
suite inside the controller Pulumi installed), `tau cluster validate nodes --include-cpu` must
really probe the real node the release runs on, and `destroy` must remove what the stack made
while keeping the workspace (TauWorkspaces are never deleted by Pulumi).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from controller_harness import get, unique
from installed_checks import (
    installation_report,
    installation_suite_runs_in_the_controller,
    real_node_probe,
)
from test_cluster_lifecycle import RELEASE_CLUSTER_OBJECTS

from hack.images import ImageRef
from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx
from infra.platform_values import RELEASE_NAME, SYSTEM_NAMESPACE, deep_merge
from infra.program import OUTPUT_NAMES

REPO = Path(__file__).resolve().parents[2]
ENGINE_TOOLS = ("pulumi", "pulumi-resource-kubernetes")
SETUP = "hack/setup/60-pulumi.sh"


def engine_dir() -> Path:
    """Where the built engine is: PATH (hack/test.sh puts .venv/bin there) or .venv/bin."""
    dirs = set()
    for tool in ENGINE_TOOLS:
        found = shutil.which(tool) or shutil.which(tool, path=str(REPO / ".venv" / "bin"))
        if found is None:
            pytest.fail(f"{tool} is not installed: run {SETUP} (builds the Pulumi engine)")
        dirs.add(Path(found).parent)
    if len(dirs) != 1:
        pytest.fail(f"pulumi and its Kubernetes provider are in different directories: {dirs}")
    return dirs.pop()


def stack_file(cluster: LocalCluster, images: dict[str, ImageRef], ws: str) -> dict:
    """stacks/Pulumi.dev.yaml plus what an operator sets for this cluster (docs/infra.md)."""
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    config = document["config"]
    config["taugrid:kubeconfig"] = str(cluster.kubeconfig)
    config["taugrid:workspace_namespace"] = ws
    config["taugrid:bootstrap_workspace"]["name"] = ws
    config["taugrid:taugrid_values"] = deep_merge(
        config["taugrid:taugrid_values"],
        {
            "global": {"imageRegistry": cluster.registry},
            "tau-core-controller": {"image": {"digest": images["controller"].digest}},
            "taugrid-core": {"portal": {"image": {"digest": images["portal"].digest}}},
        },
    )
    return document


@dataclass
class DevStack:
    cluster: LocalCluster
    images: dict[str, ImageRef]
    work_dir: Path
    backend: str
    env: dict[str, str]
    workspace: str
    seconds: dict[str, float] = field(default_factory=dict)
    up: dict[str, Any] = field(default_factory=dict)
    destroyed: dict[str, Any] | None = None

    def engine(self, operation: str) -> dict[str, Any]:
        started = time.monotonic()
        args = ["--stack", "dev", "--work-dir", str(self.work_dir), "--backend-url", self.backend]
        done = subprocess.run(
            [sys.executable, "-m", "infra.automation", operation, *args, "-o", "json"],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=REPO,
            env=self.env,
            stdin=subprocess.DEVNULL,
        )
        self.seconds[operation] = time.monotonic() - started
        assert done.returncode == 0, f"{operation} failed:\n{done.stderr[-6000:]}"
        return json.loads(done.stdout)

    def tau(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tau", *args],
            capture_output=True,
            text=True,
            timeout=300,
            env=self.env,
            stdin=subprocess.DEVNULL,
        )

    def release_secrets(self) -> list[dict]:
        listed = get(
            self.cluster, "secrets", "-n", SYSTEM_NAMESPACE, "-l", f"owner=helm,name={RELEASE_NAME}"
        )
        return (listed or {}).get("items") or []

    def pods(self, app: str) -> list[dict]:
        listed = get(
            self.cluster, "pods", "-n", SYSTEM_NAMESPACE, "-l", f"app.kubernetes.io/name={app}"
        )
        return (listed or {}).get("items") or []

    def workspace_object(self) -> dict | None:
        return get(self.cluster, "workspaces.tau.azure.com", self.workspace, "-n", SYSTEM_NAMESPACE)

    def forget_workspace(self) -> None:
        """The retained workspace outlives its controller: clear its finalizer to delete it."""
        kubectl = self.cluster.kubectl
        ref = ("workspaces.tau.azure.com", self.workspace, "-n", SYSTEM_NAMESPACE)
        kubectl(
            "patch", *ref, "--type=merge", "-p", '{"metadata":{"finalizers":null}}', check=False
        )
        kubectl("delete", *ref, "--ignore-not-found", "--wait=false", check=False)
        kubectl("delete", "namespace", self.workspace, "--ignore-not-found", "--wait=false")


@pytest.fixture(scope="module")
def dev_stack(
    local_cluster: LocalCluster,
    local_images: dict[str, ImageRef],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[DevStack]:
    bin_dir = engine_dir()
    for resource, name in RELEASE_CLUSTER_OBJECTS:
        local_cluster.kubectl("delete", resource, name, "--ignore-not-found", check=False)
    tmp = tmp_path_factory.mktemp("pulumi-dev")
    work_dir = tmp / "project"
    (work_dir / "stacks").mkdir(parents=True)
    shutil.copy(REPO / "Pulumi.yaml", work_dir / "Pulumi.yaml")
    (work_dir / "infra").symlink_to(REPO / "infra")  # the engine checks Pulumi.yaml's `main`
    workspace = unique("pulumi-ws")
    (work_dir / "stacks" / "Pulumi.dev.yaml").write_text(
        yaml.safe_dump(
            stack_file(local_cluster, local_images, workspace),
            sort_keys=False,
        )
    )
    path = os.pathsep.join([str(bin_dir), str(local_cluster.bin_dir), os.environ["PATH"]])
    env = {
        **os.environ,
        "PATH": path,
        "KUBECONFIG": str(local_cluster.kubeconfig),
        "PULUMI_HOME": str(tmp / "pulumi-home"),  # no plugin cache: the built provider runs
        "PULUMI_CONFIG_PASSPHRASE": "",  # the dev stack holds no secrets
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "TAU_CONFIG_DIR": str(tmp / "tau-config"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    stack = DevStack(
        local_cluster, local_images, work_dir, f"file://{tmp / 'state'}", env, workspace
    )
    try:
        stack.up = stack.engine("up")
        yield stack
    finally:
        if stack.destroyed is None:
            stack.engine("destroy")
        stack.forget_workspace()
        print(f"\npulumi dev stack seconds: {stack.seconds}")


def test_up_installs_the_platform_and_reports_the_documented_outputs(dev_stack: DevStack):
    done = dev_stack.up
    # The k8s provider, the platform component and its release, the bootstrap workspace
    # component and its TauWorkspace, and the stack itself.
    assert done["changes"] == {"create": 6}, done
    outputs = done["outputs"]
    assert set(outputs) == set(OUTPUT_NAMES)
    assert outputs["cluster_name"] == "taugrid-local"
    assert outputs["portal_port_forward_command"] == (
        "kubectl --context kubernetes-admin@taugrid-local -n tau-system "
        "port-forward service/tau-portal 18080:80"
    )
    assert outputs["gpu_quota"] == 0
    assert outputs["get_credentials_command"] is None and outputs["adx_endpoint"] is None
    [release] = dev_stack.release_secrets()
    assert release["metadata"]["labels"]["status"] == "deployed"


def test_the_controller_and_portal_run_our_images_on_the_real_node(dev_stack: DevStack):
    for app, image in (("tau-core-controller", "controller"), ("tau-portal", "portal")):
        [pod] = dev_stack.pods(app)
        assert pod["spec"]["nodeName"] == fx.REAL_NODE, app
        for status in pod["status"]["containerStatuses"]:
            assert status["ready"], (app, status)
            assert status["imageID"].endswith(dev_stack.images[image].digest), (app, status)


def test_the_bootstrap_workspace_was_ready_when_up_returned(dev_stack: DevStack):
    """Readiness-gated order in one pass: the release waited for the controller, the
    workspace for phase Ready, so `up` returning means the workspace is usable."""
    workspace = dev_stack.workspace_object()
    assert workspace is not None
    assert workspace["status"]["phase"] == "Ready", workspace.get("status")
    queues = get(dev_stack.cluster, "localqueues.kueue.x-k8s.io", "-n", dev_stack.workspace)
    assert [q["metadata"]["name"] for q in (queues or {}).get("items", [])] == ["jobqueue"]


def test_a_second_preview_shows_no_changes(dev_stack: DevStack):
    preview = dev_stack.engine("preview")
    assert set(preview["changes"]) == {"same"}, preview
    assert preview["changes"]["same"] == dev_stack.up["changes"]["create"]


def test_validate_installation_reports_what_pulumi_provisioned_ready(dev_stack: DevStack):
    """The stack switched Kueue, KubeRay and the baseline queue off (the cluster runs them):
    those are SKIP, everything the release installed passes."""
    installation_report(
        dev_stack.tau,
        [],
        {
            "Kubernetes": "PASS",
            "Kueue": "SKIP",
            "KubeRay": "SKIP",
            "Portal": "PASS",
            "Tau controller": "PASS",
            "TauCluster": "PASS",
            "Baseline queue": "SKIP",
            "Quota guard": "PASS",
        },
    )


def test_an_operator_suite_runs_in_the_controller_pulumi_installed(
    dev_stack: DevStack, tmp_path: Path
):
    installation_suite_runs_in_the_controller(dev_stack.tau, [], tmp_path / "site")


def test_the_node_suite_probes_the_real_node_the_release_runs_on(dev_stack: DevStack):
    [controller] = dev_stack.pods("tau-core-controller")
    node = real_node_probe(
        dev_stack.tau, dev_stack.cluster, dev_stack.images["controller"].reference
    )
    assert node["node"] == controller["spec"]["nodeName"]


def test_destroy_removes_what_the_stack_made_and_keeps_the_workspace(dev_stack: DevStack):
    dev_stack.destroyed = dev_stack.engine("destroy")
    assert dev_stack.destroyed["changes"] == {"delete": dev_stack.up["changes"]["create"]}
    assert dev_stack.release_secrets() == []
    for app in ("tau-core-controller", "tau-portal"):
        deployments = get(
            dev_stack.cluster,
            "deployments",
            "-n",
            SYSTEM_NAMESPACE,
            "-l",
            f"app.kubernetes.io/name={app}",
        )
        assert (deployments or {}).get("items") == [], app
    # Documented: destroying the stack never deletes a workspace researchers may use.
    assert dev_stack.workspace_object() is not None

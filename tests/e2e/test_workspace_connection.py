"""`tau workspace connection` against the local control plane, through the real `tau` script.

Each test builds a workspace in its own system namespace: the TauWorkspace (its status written
here, as the tau-core controller would), the LocalQueue, and researcher RBAC bound to a
client-certificate identity. A repository scaffolded by `tau workspace init-repo` then
connects to it, or fails naming the layer and owner of the problem.
"""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from tau_cli import TAU, error_line, run_tau

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx
from tau import __version__

CRD_DIR = Path(__file__).resolve().parents[2] / "charts/taugrid/charts/tau-core-controller/crds"
RESEARCHER_VERBS = {
    ("batch", "jobs"): ["create", "get", "list", "patch", "delete"],
    ("ray.io", "rayjobs"): ["create", "get", "list", "patch", "delete"],
    ("", "pods"): ["get", "list"],
    ("", "pods/log"): ["get"],
    ("kueue.x-k8s.io", "localqueues"): ["get"],
    ("kueue.x-k8s.io", "workloads"): ["get", "list"],
}


@pytest.fixture(scope="session")
def tau_crds(local_cluster: LocalCluster) -> None:
    local_cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(CRD_DIR))
    local_cluster.kubectl(
        "wait", "--for=condition=Established", "crd/workspaces.tau.azure.com", "--timeout=60s"
    )


@dataclass
class Workspace:
    cluster: LocalCluster
    name: str
    system_namespace: str
    namespace: str
    context: str
    user_kubeconfig: str  # KUBECONFIG value: the researcher's file first, then the admin's
    researcher_key: str  # base64 client-key-data that must never be printed
    config_dir: Path
    repo: Path

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "KUBECONFIG": self.user_kubeconfig,
            "TAU_CONFIG_DIR": str(self.config_dir),
            "TAU_CONTEXT": "",
        }

    def tau(self, *args: str, answer: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run the real console script in the repository; `answer` types into a terminal."""
        return run_tau(*args, cwd=self.repo, env=self.env(), answer=answer)

    def set_status(self, phase: str = "Ready", **overrides: Any) -> None:
        obj = self.cluster.get_json(
            "workspaces.tau.azure.com", self.name, "-n", self.system_namespace
        )
        generation = obj["metadata"]["generation"]
        ready = "True" if phase == "Ready" else "False"
        condition = {"lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": generation}
        status = {
            "phase": phase,
            "observedGeneration": generation,
            "target": {"resolvedNamespace": self.namespace},
            "queue": {"localQueue": fx.CLUSTER_QUEUE, "clusterQueue": fx.CLUSTER_QUEUE},
            "conditions": [
                {
                    **condition,
                    "type": "RBACReady",
                    "status": "True",
                    "reason": "RoleBindingReady",
                    "message": "researcher binding ready",
                },
                {
                    **condition,
                    "type": "QueueReady",
                    "status": ready,
                    "reason": "QueueReady" if ready == "True" else "QueueNotReady",
                    "message": "backing ClusterQueue jobqueue is not ready"
                    if ready == "False"
                    else "queue and backing ClusterQueue are readable",
                },
                {
                    **condition,
                    "type": "DriftDetected",
                    "status": "False",
                    "reason": "NoDrift",
                    "message": "",
                },
            ],
        }
        status.update(overrides)
        self.cluster.kubectl(
            "patch",
            "workspaces.tau.azure.com",
            self.name,
            "-n",
            self.system_namespace,
            "--subresource=status",
            "--type=merge",
            "-p",
            json.dumps({"status": status}),
        )


def researcher_rules(skip: tuple[str, str, str] | None = None) -> list[dict[str, Any]]:
    rules = []
    for (group, resource), verbs in RESEARCHER_VERBS.items():
        kept = [verb for verb in verbs if (group, resource, verb) != skip]
        if kept:
            rules.append({"apiGroups": [group], "resources": [resource], "verbs": kept})
    return rules


def grant(
    cluster: LocalCluster,
    namespace: str,
    user: str,
    rules: list[dict[str, Any]],
    name: str = "tau-researcher-v1",
) -> None:
    cluster.apply(
        [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": name, "namespace": namespace},
                "rules": rules,
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": name, "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
                ],
            },
        ]
    )


def build_workspace(
    cluster: LocalCluster,
    namespace: str,
    tmp_path: Path,
    skip_verb: tuple[str, str, str] | None = None,
) -> Workspace:
    suffix = uuid.uuid4().hex[:6]
    name, system_namespace = "research", f"e2e-tau-system-{suffix}"
    user = f"alice-{suffix}@example.com"
    cluster.kubectl("create", "namespace", system_namespace)
    cluster.apply(
        [
            {
                "apiVersion": "tau.azure.com/v1alpha1",
                "kind": "TauWorkspace",
                "metadata": {"name": name, "namespace": system_namespace},
                "spec": {
                    "authorization": {"mode": "workspace-rbac"},
                    "principalRef": {"provider": "entra", "name": "researchers"},
                    "kubernetesSubject": {"kind": "User", "name": user},
                    "role": "tau-researcher-v1",
                    "target": {"namespace": namespace},
                    "queue": fx.CLUSTER_QUEUE,
                },
            },
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": fx.CLUSTER_QUEUE, "namespace": namespace},
                "spec": {"clusterQueue": fx.CLUSTER_QUEUE},
            },
        ]
    )
    grant(cluster, namespace, user, researcher_rules(skip_verb))
    grant(
        cluster,
        system_namespace,
        user,
        [
            {
                "apiGroups": ["tau.azure.com"],
                "resources": ["workspaces"],
                "resourceNames": [name],
                "verbs": ["get"],
            }
        ],
        name="tau-workspace-reader",
    )
    minted = cluster.mint_kubeconfig(user, ["tau:researchers"], path=tmp_path / "alice.kubeconfig")
    config = yaml.safe_load(minted.read_text())
    context = f"lab-{suffix}"
    config["contexts"][0]["name"] = context
    config["current-context"] = context
    minted.write_text(yaml.safe_dump(config))
    repo = tmp_path / "research-repo"
    workspace = Workspace(
        cluster,
        name,
        system_namespace,
        namespace,
        context,
        f"{minted}{os.pathsep}{cluster.kubeconfig}",
        config["users"][0]["user"]["client-key-data"],
        tmp_path / "tau-config",
        repo,
    )
    scaffolded = subprocess.run(
        [
            TAU,
            "workspace",
            "init-repo",
            "research-repo",
            "--image",
            "example.azurecr.io/r:1",
            "--workspace",
            name,
            "--kube-context",
            context,
            "--system-namespace",
            system_namespace,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert scaffolded.returncode == 0, scaffolded.stderr
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return workspace


@pytest.fixture
def workspace(
    local_cluster: LocalCluster, tau_crds: None, namespace: str, tmp_path: Path
) -> Iterator[Workspace]:
    built = build_workspace(local_cluster, namespace, tmp_path)
    yield built
    local_cluster.kubectl(
        "delete", "namespace", built.system_namespace, "--wait=false", check=False
    )


def assert_no_credentials(workspace: Workspace, *results: subprocess.CompletedProcess[str]) -> None:
    key_pem = base64.b64decode(workspace.researcher_key).decode()
    for result in results:
        for stream in (result.stdout, result.stderr):
            assert workspace.researcher_key not in stream
            assert key_pem.splitlines()[1] not in stream
            assert "PRIVATE KEY" not in stream


def test_a_ready_workspace_connects_from_a_scaffolded_repository(workspace: Workspace) -> None:
    workspace.set_status("Ready")

    first = workspace.tau("workspace", "connection")
    assert first.returncode == 2
    assert "requires interactive review: this repository has not been connected" in (
        error_line(first)
    )

    approved = workspace.tau("workspace", "connection", answer="y")
    assert approved.returncode == 0, approved.stderr
    assert "Approve and connect?" in approved.stderr
    assert "Connected." in approved.stdout
    assert f"Namespace:     {workspace.namespace}" in approved.stdout
    assert f"Queue:         {fx.CLUSTER_QUEUE}" in approved.stdout
    assert "Status:        Ready" in approved.stdout

    again = workspace.tau("workspace", "connection", "-o", "json")
    assert again.returncode == 0, again.stderr
    data = json.loads(again.stdout)
    assert (data["namespace"], data["queue"], data["checked"]) == (
        workspace.namespace,
        fx.CLUSTER_QUEUE,
        "live",
    )
    isolated = Path(data["kubeconfig"])
    assert stat.S_IMODE(isolated.stat().st_mode) == 0o600
    assert stat.S_IMODE(isolated.parent.stat().st_mode) == 0o700
    copied = yaml.safe_load(isolated.read_text())
    assert [c["name"] for c in copied["contexts"]] == [workspace.context]
    assert len(copied["users"]) == 1 and len(copied["clusters"]) == 1
    assert not list(isolated.parent.glob(".candidate-*"))

    inspected = workspace.tau("workspace", "connection", "inspect", "-o", "json")
    assert json.loads(inspected.stdout)["pinned"] is True
    assert_no_credentials(workspace, first, approved, again, inspected)


def test_a_degraded_workspace_fails_in_the_readiness_layer(workspace: Workspace) -> None:
    workspace.set_status("Degraded")
    result = workspace.tau("workspace", "connection", answer="y")
    line = error_line(result)
    assert result.returncode == 1
    assert line.startswith('error: workspace readiness: TauWorkspace "research" is not Ready')
    assert "QueueReady=False QueueNotReady" in line
    assert "(owner: platform operator)" in line
    assert_no_credentials(workspace, result)


def test_a_stale_status_is_not_ready(workspace: Workspace) -> None:
    workspace.set_status("Ready", observedGeneration=0)
    line = error_line(workspace.tau("workspace", "connection", answer="y"))
    assert "workspace readiness:" in line and "status is stale" in line


def test_a_missing_local_queue_fails_in_the_readiness_layer(workspace: Workspace) -> None:
    workspace.set_status("Ready")
    workspace.cluster.kubectl("delete", "localqueue", fx.CLUSTER_QUEUE, "-n", workspace.namespace)
    line = error_line(workspace.tau("workspace", "connection", answer="y"))
    assert line.startswith(
        f'error: workspace readiness: LocalQueue "{fx.CLUSTER_QUEUE}" does not exist in '
        f'namespace "{workspace.namespace}"'
    )
    assert "(owner: platform operator)" in line


def test_a_researcher_lacking_a_verb_fails_in_the_authorization_layer(
    local_cluster: LocalCluster, tau_crds: None, namespace: str, tmp_path: Path
) -> None:
    built = build_workspace(
        local_cluster, namespace, tmp_path, skip_verb=("ray.io", "rayjobs", "delete")
    )
    built.set_status("Ready")
    result = built.tau("workspace", "connection", answer="y")
    line = error_line(result)
    assert result.returncode == 1
    assert line.startswith(
        f'error: authorization: you may not delete rayjobs.ray.io in namespace "{namespace}"'
    )
    assert "expected role tau-researcher-v1" in line
    assert "(owner: platform operator)" in line
    local_cluster.kubectl(
        "delete", "namespace", built.system_namespace, "--wait=false", check=False
    )


def test_descriptor_drift_and_a_recreated_workspace_need_interactive_review(
    workspace: Workspace,
) -> None:
    workspace.set_status("Ready")
    assert workspace.tau("workspace", "connection", answer="y").returncode == 0

    obj = workspace.cluster.get_json(
        "workspaces.tau.azure.com", workspace.name, "-n", workspace.system_namespace
    )
    workspace.cluster.kubectl(
        "delete", "workspaces.tau.azure.com", workspace.name, "-n", workspace.system_namespace
    )
    del obj["metadata"]["uid"], obj["metadata"]["resourceVersion"], obj["status"]
    workspace.cluster.kubectl("create", "-f", "-", input=json.dumps(obj))
    workspace.set_status("Ready")
    recreated = workspace.tau("workspace", "connection")
    assert recreated.returncode == 2
    assert "cached workspace connection contract changed (workspace UID changed" in (
        error_line(recreated)
    )
    assert workspace.tau("workspace", "connection", answer="yes").returncode == 0

    descriptor = workspace.repo / "tau" / "workspace.connection.yaml"
    descriptor.write_text(
        descriptor.read_text().replace("privateCluster: false", "privateCluster: false\n  # edited")
    )
    assert workspace.tau("workspace", "connection").returncode == 0  # comments do not drift
    descriptor.write_text(
        descriptor.read_text().replace(f"minTauVersion: {__version__}", "minTauVersion: 0.0.1")
    )
    drifted = workspace.tau("workspace", "connection")
    line = error_line(drifted)
    assert "requires interactive review: configured workspace connection changed" in line
    assert "descriptor digest changed" in line
    declined = workspace.tau("workspace", "connection", answer="n")
    assert "was not confirmed" in error_line(declined)


def test_a_descriptor_with_an_embedded_token_is_refused(workspace: Workspace) -> None:
    descriptor = workspace.repo / "tau" / "workspace.connection.yaml"
    token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZUBleGFtcGxlLmNvbSJ9.c2lnbmF0dXJlLWJ5dGVz"
    descriptor.write_text(descriptor.read_text() + f"  token: {token}\n")
    for args in (("workspace", "connection"), ("workspace", "connection", "--offline")):
        result = workspace.tau(*args)
        assert result.returncode == 2
        assert "credential-shaped content" in error_line(result)
        assert "key 'token'" in result.stderr
        assert token not in result.stdout + result.stderr


def test_status_and_check_report_conditions_with_owners(workspace: Workspace) -> None:
    workspace.set_status("Degraded")
    status = workspace.tau(
        "workspace",
        "status",
        workspace.name,
        "-n",
        workspace.system_namespace,
        "-o",
        "json",
        "--context",
        workspace.context,
    )
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    queue = next(c for c in data["conditions"] if c["type"] == "QueueReady")
    assert (queue["status"], queue["reason"], queue["owner"]) == (
        "False",
        "QueueNotReady",
        "platform operator",
    )
    assert data["resolved"]["namespace"] == workspace.namespace

    check = workspace.tau(
        "workspace",
        "check",
        workspace.name,
        "-n",
        workspace.system_namespace,
        "--context",
        workspace.context,
    )
    assert check.returncode == 1
    assert "is not Ready (phase=Degraded)" in error_line(check)

    workspace.set_status("Ready")
    ok = workspace.tau(
        "workspace",
        "check",
        workspace.name,
        "-n",
        workspace.system_namespace,
        "--context",
        workspace.context,
    )
    assert ok.returncode == 0, ok.stderr
    assert f"workspace {workspace.name}: Ready" in ok.stdout

    admin_context = yaml.safe_load(workspace.cluster.kubeconfig.read_text())["current-context"]
    storage = workspace.tau(
        "workspace",
        "check",
        workspace.name,
        "-n",
        workspace.system_namespace,
        "--context",
        admin_context,
        "--data-pvc",
        "blob-training",
    )
    assert storage.returncode == 0, storage.stderr
    assert f"pvc {workspace.namespace}/blob-training: missing" in storage.stdout
    assert "warning: PVC" in storage.stderr and "Ready does not cover storage" in storage.stderr


@pytest.fixture
def admin(local_cluster: LocalCluster, tau_crds: None, tmp_path: Path) -> Iterator[Workspace]:
    """A platform operator's shell: admin kubeconfig, an empty system namespace."""
    system_namespace = f"e2e-tau-system-{uuid.uuid4().hex[:6]}"
    local_cluster.kubectl("create", "namespace", system_namespace)
    config = yaml.safe_load(local_cluster.kubeconfig.read_text())
    tmp_path.joinpath("ops").mkdir()
    yield Workspace(
        local_cluster,
        "research",
        system_namespace,
        "",
        config["current-context"],
        str(local_cluster.kubeconfig),
        "",
        tmp_path / "tau-config",
        tmp_path / "ops",
    )
    local_cluster.kubectl("delete", "namespace", system_namespace, "--wait=false", check=False)


def test_create_previews_then_applies_a_workspace_the_apiserver_accepts(
    admin: Workspace, namespace: str
) -> None:
    flags = (
        "--namespace",
        namespace,
        "--system-namespace",
        admin.system_namespace,
        "--context",
        admin.context,
    )
    preview = admin.tau("workspace", "create", "research", "--principal-name", "ml-team", *flags)
    assert preview.returncode == 0, preview.stderr
    assert "# preflight passed: ClusterQueue jobqueue exists; TauWorkspace absent" in preview.stdout
    rendered = yaml.safe_load(preview.stdout)
    assert rendered["kind"] == "TauWorkspace"
    assert rendered["spec"]["kubernetesSubject"] == {"kind": "Group", "name": "ml-team"}
    listed = admin.cluster.get_json("workspaces.tau.azure.com", "-n", admin.system_namespace)
    assert listed["items"] == []

    applied = admin.tau(
        "workspace", "create", "research", "--principal-name", "ml-team", *flags, "--apply"
    )
    assert applied.returncode == 0, applied.stderr
    assert f"TauWorkspace {admin.system_namespace}/research created" in applied.stdout
    stored = admin.cluster.get_json(
        "workspaces.tau.azure.com", "research", "-n", admin.system_namespace
    )
    assert stored["spec"]["role"] == "tau-researcher-v1"
    assert stored["spec"]["target"] == {"namespace": namespace, "createNamespace": True}
    assert stored["spec"]["defaults"]["outputRoot"] == "/data/projects/research/runs"

    again = admin.tau(
        "workspace", "create", "research", "--principal-name", "ml-team", *flags, "--apply"
    )
    assert again.returncode == 0 and "unchanged" in again.stdout

    different = admin.tau(
        "workspace", "create", "research", "--principal-name", "others", *flags, "--apply"
    )
    assert different.returncode == 1
    assert "exists with a different spec" in error_line(different)

    listed = admin.tau(
        "workspace", "list", "-n", admin.system_namespace, "--context", admin.context, "-o", "json"
    )
    assert [row["name"] for row in json.loads(listed.stdout)] == ["research"]

    quota = admin.tau(
        "workspace",
        "quota",
        "show",
        "research",
        "--system-namespace",
        admin.system_namespace,
        "--context",
        admin.context,
        "-o",
        "json",
    )
    assert quota.returncode == 0, quota.stderr
    shown = json.loads(quota.stdout)
    assert shown["clusterQueue"] == fx.CLUSTER_QUEUE
    gpus = {(row["flavor"], row["resource"]): row["nominal"] for row in shown["quota"]}
    assert gpus[(fx.GPU_FLAVOR_H200, fx.GPU_RESOURCE)] == str(
        fx.H200_POOL.gpus * fx.H200_POOL.count
    )


def test_create_without_a_principal_binds_an_inert_group_and_says_so(admin: Workspace) -> None:
    result = admin.tau(
        "workspace",
        "create",
        "research",
        "--system-namespace",
        admin.system_namespace,
        "--context",
        admin.context,
    )
    assert result.returncode == 0, result.stderr
    assert "notice: --principal-name was not given" in result.stderr
    assert yaml.safe_load(result.stdout)["spec"]["principalRef"]["name"] == "research"


def test_adopt_checks_the_existing_namespace_and_queue_then_applies(
    admin: Workspace, namespace: str
) -> None:
    flags = (
        "-n",
        namespace,
        "--data-pvc",
        "",
        "--system-namespace",
        admin.system_namespace,
        "--context",
        admin.context,
    )
    missing = admin.tau("workspace", "adopt", "research", *flags)
    assert missing.returncode == 1
    assert f'LocalQueue "{namespace}/jobqueue" does not exist' in error_line(missing)

    admin.cluster.apply(
        [
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "jobqueue", "namespace": namespace},
                "spec": {"clusterQueue": fx.CLUSTER_QUEUE},
            }
        ]
    )
    applied = admin.tau("workspace", "adopt", "research", *flags, "--apply")
    assert applied.returncode == 0, applied.stderr
    stored = admin.cluster.get_json(
        "workspaces.tau.azure.com", "research", "-n", admin.system_namespace
    )
    assert stored["spec"]["authorization"]["mode"] == "cluster-wide"
    assert "principalRef" not in stored["spec"]


def test_quota_request_apply_submits_a_tau_quota_request(admin: Workspace) -> None:
    args = (
        "workspace",
        "quota",
        "request",
        "research",
        "--resource",
        "nvidia.com/gpu",
        "--requested",
        "8",
        "--reason",
        "ablation sweep",
        "--system-namespace",
        admin.system_namespace,
        "--context",
        admin.context,
    )
    preview = admin.tau(*args)
    assert yaml.safe_load(preview.stdout)["metadata"]["name"] == (
        "research-nvidia-com-gpu-quota-request"
    )
    applied = admin.tau(*args, "--apply")
    assert applied.returncode == 0, applied.stderr
    stored = admin.cluster.get_json(
        "quotarequests.tau.azure.com",
        "research-nvidia-com-gpu-quota-request",
        "-n",
        admin.system_namespace,
    )
    assert stored["spec"] == {
        "workspace": "research",
        "resource": "nvidia.com/gpu",
        "requested": 8,
        "reason": "ablation sweep",
        "mutationMode": "ReportOnly",
    }


def test_assign_without_a_name_binds_the_clusters_only_workspace(workspace: Workspace) -> None:
    """Finding the active workspace lists TauWorkspaces: an operator's context can, and the
    researcher's is told which permission is missing."""
    (workspace.repo / "tau" / "workspace.connection.yaml").unlink()
    args = ("workspace", "connection", "assign", "--system-namespace", workspace.system_namespace)
    refused = workspace.tau(*args, "--context", workspace.context)
    assert refused.returncode == 1
    assert error_line(refused).startswith("error: authorization: cannot list workspaces")

    admin = workspace.cluster.kubeconfig
    admin_context = yaml.safe_load(admin.read_text())["current-context"]
    env = {**workspace.env(), "KUBECONFIG": str(admin)}
    assigned = run_tau(*args, "--context", admin_context, cwd=workspace.repo, env=env)
    assert assigned.returncode == 0, assigned.stderr
    assert assigned.stdout.startswith(f"Assigned workspace {workspace.name} (context ")


def test_a_local_assignment_connects_a_repository_without_a_descriptor(
    workspace: Workspace,
) -> None:
    workspace.set_status("Ready")
    (workspace.repo / "tau" / "workspace.connection.yaml").unlink()
    assigned = workspace.tau(
        "workspace",
        "connection",
        "assign",
        workspace.name,
        "--context",
        workspace.context,
        "--system-namespace",
        workspace.system_namespace,
    )
    assert assigned.returncode == 0, assigned.stderr
    connected = workspace.tau("workspace", "connection", answer="y")
    assert connected.returncode == 0, connected.stderr
    assert "Descriptor:    local assignment " in connected.stdout
    assert f"Namespace:     {workspace.namespace}" in connected.stdout

    other = workspace.repo.parent / "other-checkout"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    elsewhere = run_tau("workspace", "connection", cwd=other, env=workspace.env())
    assert elsewhere.returncode == 2
    assert "descriptor not found" in error_line(elsewhere)

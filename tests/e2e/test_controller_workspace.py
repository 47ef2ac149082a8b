"""The tau-core controller turns one `kubectl apply` of a TauWorkspace into a Ready workspace.

The tests run in order against one controller process and build on each other: a Ready
primary workspace, its researcher's access gate, repair, a blocked second workspace, a hard
controller restart, deletion (and the blocked workspace's promotion), a foreign binding, a
reserved target, and cluster-wide mode with retargeting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from controller_harness import (
    Controller,
    condition,
    get,
    install,
    items,
    unique,
    wait_for,
)

from tau import keys

OWNED = f"{keys.APP_MANAGED_BY}={keys.CONTROLLER_NAME}"


class State:
    system = unique("tau-sys")
    first = unique("ws-a")
    second = unique("ws-b")
    researcher = unique("researcher")
    first_namespace = ""


@pytest.fixture(scope="module")
def controller(local_cluster, tmp_path_factory) -> Iterator[Controller]:
    install(local_cluster, State.system)
    process = Controller(local_cluster, State.system, tmp_path_factory.mktemp("controller"))
    process.start()
    yield process
    # Delete while the controller runs, so its finalizer is honoured and nothing is left behind.
    for name in (State.first, State.second):
        local_cluster.kubectl(
            "delete", "workspaces.tau.azure.com", name, "-n", State.system, "--timeout=60s",
            check=False,
        )  # fmt: skip
    process.stop()


def workspace(name: str, **spec) -> str:
    body = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauWorkspace",
        "metadata": {"name": name, "namespace": State.system},
        "spec": {
            "principalRef": {"provider": "entra", "name": "ml-researchers"},
            "kubernetesSubject": {"kind": "User", "name": State.researcher},
            "role": "tau-researcher-v1",
            "target": {"createNamespace": True},
            "queue": "jobqueue",
            "defaults": {"outputRoot": f"/data/{name}"},
            **spec,
        },
    }
    return json.dumps(body)


def tw(cluster, name):
    return get(cluster, "workspaces.tau.azure.com", name, "-n", State.system)


def phase(cluster, name):
    return ((tw(cluster, name) or {}).get("status") or {}).get("phase")


def owned(cluster, kind, workspace_name, namespace=None):
    scope = ["-n", namespace] if namespace else ["-A"]
    selector = f"{OWNED},{keys.WORKSPACE}={workspace_name}"
    return items(cluster, kind, *scope, "-l", selector)


def test_one_apply_yields_a_ready_workspace(local_cluster, controller):
    identity = {
        "serviceAccountName": "ml-runner",
        "clientId": "00000000-0000-0000-0000-000000000001",
    }
    local_cluster.kubectl(
        "apply", "-f", "-", input=workspace(State.first, workloadIdentity=identity)
    )
    wait_for("workspace Ready", lambda: phase(local_cluster, State.first) == "Ready")
    obj = tw(local_cluster, State.first)
    ns = State.first_namespace = obj["status"]["target"]["resolvedNamespace"]
    assert ns == State.first
    assert obj["status"]["queue"] == {"localQueue": "jobqueue", "clusterQueue": "jobqueue"}
    assert obj["metadata"]["annotations"][keys.PRIMARY_WORKSPACE] == "true"
    assert keys.WORKSPACE_FINALIZER in obj["metadata"]["finalizers"]
    assert condition(obj, "RBACReady") == ("True", "RoleBindingReady")
    assert condition(obj, "QueueReady") == ("True", "QueueReady")
    assert condition(obj, "WorkloadIdentityReady") == ("True", "ServiceAccountReady")
    assert condition(obj, "DriftDetected") == ("False", "NoDrift")

    namespace = get(local_cluster, "namespace", ns)
    labels = namespace["metadata"]["labels"]
    assert labels[keys.PSA_ENFORCE] == "restricted" and labels[keys.PSA_WARN] == "restricted"
    assert obj["status"]["target"]["podSecurity"] == "restricted"  # what tau run renders for
    assert labels[keys.WORKSPACE] == State.first
    assert labels[keys.KUEUE_DEFAULT_LOCAL_QUEUE] == "jobqueue"
    assert namespace["metadata"]["annotations"][keys.RESULT_SCOPE] == f"/data/{State.first}"

    binding = get(local_cluster, "rolebinding", "tau-researcher-v1", "-n", ns)
    assert binding["roleRef"]["name"] == "tau-researcher-v1"
    assert binding["subjects"] == [
        {"kind": "User", "name": State.researcher, "apiGroup": "rbac.authorization.k8s.io"}
    ]
    queue = get(local_cluster, "localqueues.kueue.x-k8s.io", "jobqueue", "-n", ns)
    assert queue["spec"]["clusterQueue"] == "jobqueue"
    assert queue["metadata"]["labels"][keys.WORKSPACE] == State.first
    account = get(local_cluster, "serviceaccount", "ml-runner", "-n", ns)
    assert account["metadata"]["labels"][keys.AZURE_WORKLOAD_IDENTITY_USE] == "true"
    assert (
        account["metadata"]["annotations"][keys.AZURE_WORKLOAD_IDENTITY_CLIENT_ID]
        == (identity["clientId"])
    )
    reader = get(local_cluster, "role", f"tau-workspace-reader-{State.first}", "-n", State.system)
    assert reader["rules"][0]["resourceNames"] == [State.first]

    check = subprocess.run(
        [sys.executable, "-m", "tau", "workspace", "check", State.first, "-n", State.system],
        capture_output=True,
        text=True,
        env={**os.environ, "KUBECONFIG": str(local_cluster.kubeconfig)},
        timeout=60,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def job(name: str, namespace: str) -> str:
    return json.dumps(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "labels": {keys.KUEUE_QUEUE_NAME: "jobqueue"},
            },
            "spec": {
                "suspend": True,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "main", "image": "busybox", "command": ["true"]}],
                    }
                },
            },
        }
    )


def test_researcher_can_submit_only_in_its_workspace(local_cluster, controller, namespace):
    researcher = local_cluster.mint_kubeconfig(State.researcher)
    ns = State.first_namespace
    ok = local_cluster.kubectl(
        "create", "-f", "-", input=job("smoke", ns), kubeconfig=researcher, check=False
    )
    assert ok.returncode == 0, ok.stderr
    denied = local_cluster.kubectl(
        "create", "-f", "-", input=job("smoke", namespace), kubeconfig=researcher, check=False
    )
    assert denied.returncode != 0
    assert "Forbidden" in denied.stderr or "forbidden" in denied.stderr
    status = local_cluster.kubectl(
        "get",
        "workspaces.tau.azure.com",
        State.first,
        "-n",
        State.system,
        kubeconfig=researcher,
        check=False,
    )
    assert status.returncode == 0, status.stderr
    other = local_cluster.kubectl(
        "get", "workspaces.tau.azure.com", "-n", State.system, kubeconfig=researcher, check=False
    )
    assert other.returncode != 0


def test_deleted_local_queue_is_repaired(local_cluster, controller):
    ns = State.first_namespace
    before = get(local_cluster, "localqueues.kueue.x-k8s.io", "jobqueue", "-n", ns)
    local_cluster.kubectl("delete", "localqueues.kueue.x-k8s.io", "jobqueue", "-n", ns)

    def recreated():
        queue = get(local_cluster, "localqueues.kueue.x-k8s.io", "jobqueue", "-n", ns)
        return queue and queue["metadata"]["uid"] != before["metadata"]["uid"]

    wait_for("LocalQueue recreated", recreated, timeout=60)
    wait_for("workspace Ready again", lambda: phase(local_cluster, State.first) == "Ready")


def test_additional_workspace_is_blocked(local_cluster, controller):
    local_cluster.kubectl("apply", "-f", "-", input=workspace(State.second))
    wait_for(
        "second workspace blocked",
        lambda: (
            condition(tw(local_cluster, State.second), "QueueReady")[1]
            == keys.REASON_ADDITIONAL_WORKSPACE_BLOCKED
        ),
    )
    obj = tw(local_cluster, State.second)
    assert obj["status"]["phase"] == "Degraded"
    assert condition(obj, "RBACReady") == ("False", keys.REASON_ADDITIONAL_WORKSPACE_BLOCKED)
    assert get(local_cluster, "namespace", State.second) is None
    assert owned(local_cluster, "localqueues.kueue.x-k8s.io", State.second) == []
    assert phase(local_cluster, State.first) == "Ready"


def test_restart_mid_reconcile_creates_no_duplicates(local_cluster, controller):
    patch = {"spec": {"workloadIdentity": {"serviceAccountName": "ml-runner-2", "clientId": "c2"}}}
    local_cluster.kubectl(
        "patch", "workspaces.tau.azure.com", State.first, "-n", State.system, "--type=merge",
        "-p", json.dumps(patch),
    )  # fmt: skip
    controller.kill()
    controller.start()
    ns = State.first_namespace

    def settled():
        obj = tw(local_cluster, State.first)
        return (
            obj["status"].get("observedGeneration") == obj["metadata"]["generation"]
            and obj["status"]["phase"] == "Ready"
            and condition(obj, "WorkloadIdentityReady")[0] == "True"
            and get(local_cluster, "serviceaccount", "ml-runner", "-n", ns) is None
        )

    wait_for("workspace settled after restart", settled, timeout=90)
    accounts = [a["metadata"]["name"] for a in owned(local_cluster, "serviceaccounts", State.first)]
    assert accounts == ["ml-runner-2"]
    bindings = sorted(
        (b["metadata"]["namespace"], b["metadata"]["name"])
        for b in owned(local_cluster, "rolebindings", State.first)
    )
    assert bindings == sorted(
        [(ns, "tau-researcher-v1"), (State.system, f"tau-workspace-reader-{State.first}")]
    )
    assert len(owned(local_cluster, "localqueues.kueue.x-k8s.io", State.first)) == 1
    assert len(owned(local_cluster, "clusterrolebindings", State.first)) == 1


def test_quota_request_reports_the_platform_decision(local_cluster, controller):
    name = unique("more-gpus")
    request = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauQuotaRequest",
        "metadata": {"name": name, "namespace": State.system},
        "spec": {"workspace": State.first, "resource": "nvidia.com/gpu", "requested": 8,
                 "reason": "sweep"},
    }  # fmt: skip
    local_cluster.kubectl("apply", "-f", "-", input=json.dumps(request))

    def quota_phase():
        obj = get(local_cluster, "quotarequests.tau.azure.com", name, "-n", State.system)
        return ((obj or {}).get("status") or {}).get("phase")

    wait_for("PendingApproval", lambda: quota_phase() == "PendingApproval")
    local_cluster.kubectl(
        "annotate", "quotarequests.tau.azure.com", name, "-n", State.system,
        f"{keys.QUOTA_APPROVED}=true", f"{keys.QUOTA_REVIEWED_BY}=platform-oncall",
    )  # fmt: skip
    wait_for("Approved", lambda: quota_phase() == "Approved")
    obj = get(local_cluster, "quotarequests.tau.azure.com", name, "-n", State.system)
    assert obj["status"]["approvedBy"] == "platform-oncall"
    assert condition(obj, "QuotaMutated") == ("False", "ReportOnly")


def test_deleting_the_workspace_cleans_access_but_keeps_the_namespace(local_cluster, controller):
    ns = State.first_namespace
    local_cluster.kubectl(
        "delete", "workspaces.tau.azure.com", State.first, "-n", State.system, "--wait=false"
    )
    wait_for("workspace gone", lambda: tw(local_cluster, State.first) is None)
    assert get(local_cluster, "namespace", ns) is not None
    for kind in ("rolebindings", "roles", "serviceaccounts", "localqueues.kueue.x-k8s.io"):
        assert owned(local_cluster, kind, State.first) == [], kind
    assert owned(local_cluster, "clusterrolebindings", State.first) == []
    researcher = local_cluster.mint_kubeconfig(State.researcher)
    denied = local_cluster.kubectl(
        "create", "-f", "-", input=job("after", ns), kubeconfig=researcher, check=False
    )
    assert denied.returncode != 0 and "orbidden" in denied.stderr
    # The blocked workspace is promoted once the primary is gone.
    wait_for("second workspace promoted", lambda: phase(local_cluster, State.second) == "Ready")


def test_a_foreign_role_binding_is_refused_not_adopted(local_cluster, controller, namespace):
    foreign = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "tau-researcher-v1", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [
            {"kind": "User", "name": "someone-else", "apiGroup": "rbac.authorization.k8s.io"}
        ],
    }
    local_cluster.kubectl("apply", "-f", "-", input=json.dumps(foreign))
    patch = {"spec": {"target": {"namespace": namespace, "createNamespace": False}}}
    local_cluster.kubectl(
        "patch", "workspaces.tau.azure.com", State.second, "-n", State.system, "--type=merge",
        "-p", json.dumps(patch),
    )  # fmt: skip
    wait_for(
        "RBACReady refused",
        lambda: (
            condition(tw(local_cluster, State.second), "RBACReady")
            == ("False", "AuthorizationNotReady")
        ),
    )
    obj = tw(local_cluster, State.second)
    assert "refusing to adopt" in next(
        c["message"] for c in obj["status"]["conditions"] if c["type"] == "RBACReady"
    )
    assert obj["status"]["phase"] == "Degraded"
    binding = get(local_cluster, "rolebinding", "tau-researcher-v1", "-n", namespace)
    assert binding["subjects"] == foreign["subjects"]
    assert keys.WORKSPACE not in (binding["metadata"].get("labels") or {})


def test_a_reserved_target_is_refused_and_left_untouched(local_cluster, controller):
    before = get(local_cluster, "namespace", "default")["metadata"].get("labels") or {}
    patch = {"spec": {"target": {"namespace": "default", "createNamespace": True}}}
    local_cluster.kubectl(
        "patch", "workspaces.tau.azure.com", State.second, "-n", State.system, "--type=merge",
        "-p", json.dumps(patch),
    )  # fmt: skip
    wait_for(
        "namespace refused",
        lambda: (
            condition(tw(local_cluster, State.second), "DriftDetected")
            == ("True", "NamespaceReconcileFailed")
        ),
    )
    assert phase(local_cluster, State.second) == "Degraded"
    after = get(local_cluster, "namespace", "default")["metadata"].get("labels") or {}
    assert after == before


def test_cluster_wide_mode_and_retargeting_release_the_old_namespace(local_cluster, controller):
    first, second = unique("ws-target"), unique("ws-target")
    spec = {"target": {"namespace": first, "createNamespace": True}}
    local_cluster.kubectl(
        "patch", "workspaces.tau.azure.com", State.second, "-n", State.system, "--type=merge",
        "-p", json.dumps({"spec": spec}),
    )  # fmt: skip
    wait_for("Ready in the first target", lambda: phase(local_cluster, State.second) == "Ready")
    cluster_wide = {
        "authorization": {"mode": "cluster-wide"},
        "principalRef": None,
        "kubernetesSubject": None,
        "role": None,
        "target": {"namespace": second, "createNamespace": True},
    }
    local_cluster.kubectl(
        "patch", "workspaces.tau.azure.com", State.second, "-n", State.system, "--type=merge",
        "-p", json.dumps({"spec": cluster_wide}),
    )  # fmt: skip

    def moved():
        obj = tw(local_cluster, State.second)
        return (
            obj["status"].get("observedGeneration") == obj["metadata"]["generation"]
            and obj["status"]["phase"] == "Ready"
            and obj["status"]["target"]["resolvedNamespace"] == second
            and keys.WORKSPACE not in get(local_cluster, "namespace", first)["metadata"]["labels"]
        )

    wait_for("retargeted in cluster-wide mode", moved)
    obj = tw(local_cluster, State.second)
    assert condition(obj, "RBACReady") == ("True", "ExistingClusterAuthorization")
    old = get(local_cluster, "namespace", first)["metadata"]
    assert old["labels"][keys.PSA_ENFORCE] == "restricted"  # unrelated metadata is kept
    assert not {keys.LOCAL_QUEUE, keys.KUEUE_DEFAULT_LOCAL_QUEUE, keys.APP_MANAGED_BY} & set(
        old["labels"]
    )
    assert keys.RESULT_SCOPE not in (old.get("annotations") or {})
    assert owned(local_cluster, "rolebindings", State.second) == []
    assert owned(local_cluster, "clusterrolebindings", State.second) == []
    queues = owned(local_cluster, "localqueues.kueue.x-k8s.io", State.second)
    assert [q["metadata"]["namespace"] for q in queues] == [second]
    for ns in (first, second):
        local_cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)

"""TauWorkspace decisions: who is primary, what is reserved, what RBAC and metadata to own."""

from __future__ import annotations

import pytest

from tau import keys
from tau.controller import kubeapi as k
from tau.controller.conditions import workspace_phase
from tau.controller.workspace import (
    ReconcileError,
    blocked_conditions,
    desired_rbac,
    enforced_pod_security,
    is_reserved,
    namespace_metadata,
    namespace_patch,
    owned_by,
    ownership_labels,
    resolve_primary,
    target_namespace,
)


def ws(name, created="2026-01-01T00:00:00Z", primary=False, deleting=False, **spec):
    meta = {"name": name, "namespace": "tau-system", "creationTimestamp": created}
    if primary:
        meta["annotations"] = {keys.PRIMARY_WORKSPACE: "true"}
    if deleting:
        meta["deletionTimestamp"] = "2026-02-01T00:00:00Z"
    return {"metadata": meta, "spec": spec}


def test_marked_workspace_is_primary_even_while_terminating():
    assert resolve_primary([ws("a"), ws("b", primary=True, deleting=True)]) == "b"


def test_oldest_live_workspace_is_primary_ties_broken_by_name():
    assert (
        resolve_primary([ws("b", "2026-01-02T00:00:00Z"), ws("c", "2026-01-01T00:00:00Z")]) == "c"
    )
    assert resolve_primary([ws("zeta"), ws("alpha")]) == "alpha"
    assert resolve_primary([ws("old", deleting=True), ws("new", "2027-01-01T00:00:00Z")]) == "new"


def test_two_marked_or_none_live_is_an_error():
    with pytest.raises(ReconcileError, match="several"):
        resolve_primary([ws("a", primary=True), ws("b", primary=True)])
    with pytest.raises(ReconcileError):
        resolve_primary([ws("a", deleting=True)])


def test_blocked_workspace_is_degraded_with_the_documented_reason():
    conditions = blocked_conditions("second", "first", 3)
    assert workspace_phase(conditions) == "Degraded"
    blocked = [c for c in conditions if c["reason"] == keys.REASON_ADDITIONAL_WORKSPACE_BLOCKED]
    assert {c["type"] for c in blocked} == {"RBACReady", "QueueReady"}
    assert "first" in blocked[0]["message"] and "second" in blocked[0]["message"]


@pytest.mark.parametrize(
    "namespace", ["tau-system", "tau-platform", "kube-system", "kube-public", "default"]
)
def test_reserved_targets(namespace):
    assert is_reserved(namespace, "tau-system")


def test_custom_system_namespace_is_reserved_and_tau_system_is_not():
    assert is_reserved("platform", "platform")
    assert not is_reserved("tau-system", "platform")
    assert not is_reserved("ml-research", "tau-system")


def test_target_defaults_to_the_workspace_name():
    assert target_namespace(ws("ml")) == "ml"
    assert target_namespace(ws("ml", target={"namespace": "ml-team"})) == "ml-team"


def test_workspace_rbac_objects_and_subject_mapping():
    group = ws("ml", kubernetesSubject={"kind": "Group", "name": "researchers"})
    objects = desired_rbac(group, "ml-ns", "tau-system")
    kinds = [(resource.kind, obj["metadata"]["name"]) for resource, obj in objects]
    assert kinds == [
        ("RoleBinding", "tau-researcher-v1"),
        ("ClusterRoleBinding", "tau-clusterqueue-reader-ml"),
        ("Role", "tau-workspace-reader-ml"),
        ("RoleBinding", "tau-workspace-reader-ml"),
    ]
    researcher = objects[0][1]
    assert researcher["metadata"]["namespace"] == "ml-ns"
    assert researcher["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "tau-researcher-v1",
    }
    assert researcher["subjects"] == [
        {"kind": "Group", "name": "researchers", "apiGroup": "rbac.authorization.k8s.io"}
    ]
    reader = objects[2][1]
    assert reader["metadata"]["namespace"] == "tau-system"
    assert reader["rules"][0]["resourceNames"] == ["ml"]
    assert reader["rules"][0]["resources"] == ["workspaces", "workspaces/status"]
    assert reader["rules"][1] == {
        "apiGroups": ["tau.azure.com"],
        "resources": ["quotarequests"],
        "verbs": ["create", "get", "list"],  # list: quota show lists open requests
    }
    assert all(owned_by(obj, "ml") for _, obj in objects)


def test_service_account_subjects_live_in_the_binding_namespace():
    sa = ws("ml", kubernetesSubject={"kind": "ServiceAccount", "name": "runner"})
    objects = dict(
        (obj["metadata"]["name"] + r.kind, obj) for r, obj in desired_rbac(sa, "ml", "tau-system")
    )
    assert objects["tau-researcher-v1RoleBinding"]["subjects"] == [
        {"kind": "ServiceAccount", "name": "runner", "namespace": "ml"}
    ]
    assert objects["tau-workspace-reader-mlRoleBinding"]["subjects"][0]["namespace"] == "tau-system"


def test_ownership_needs_both_labels_for_this_workspace():
    assert owned_by({"metadata": {"labels": ownership_labels("ml")}}, "ml")
    assert not owned_by({"metadata": {"labels": ownership_labels("other")}}, "ml")
    assert not owned_by({"metadata": {"labels": {keys.WORKSPACE: "ml"}}}, "ml")
    assert not owned_by({"metadata": {}}, "ml")


def test_created_namespace_gets_pod_security_and_result_scope():
    spec = {"target": {"createNamespace": True}, "defaults": {"outputRoot": "/data/ml"}}
    labels, annotations = namespace_metadata(ws("ml", **spec), "jobqueue", None)
    assert labels == {
        keys.WORKSPACE: "ml",
        keys.LOCAL_QUEUE: "jobqueue",
        keys.KUEUE_DEFAULT_LOCAL_QUEUE: "jobqueue",
        keys.APP_MANAGED_BY: "tau-core-controller",
        keys.PSA_ENFORCE: "restricted",
        keys.PSA_AUDIT: "restricted",
        keys.PSA_WARN: "restricted",
    }
    assert annotations == {keys.RESULT_SCOPE: "/data/ml"}
    assert enforced_pod_security(None, labels) == "restricted"  # published in the status


def test_the_platform_chooses_the_enforced_level_and_warnings_stay_restricted():
    spec = {"target": {"createNamespace": True}}
    labels, _ = namespace_metadata(ws("ml", **spec), "jobqueue", None, "baseline")
    assert labels[keys.PSA_ENFORCE] == "baseline"
    assert labels[keys.PSA_WARN] == labels[keys.PSA_AUDIT] == "restricted"


def test_existing_namespace_keeps_its_pod_security_labels():
    existing = {"metadata": {"name": "ml", "labels": {keys.PSA_ENFORCE: "restricted"}}}
    labels, annotations = namespace_metadata(ws("ml"), "jobqueue", existing)
    assert keys.PSA_ENFORCE not in labels and keys.APP_MANAGED_BY not in labels
    assert enforced_pod_security(existing, labels) == "restricted"
    patch = namespace_patch(existing, labels, annotations)
    assert patch == {
        "metadata": {
            "labels": {
                keys.WORKSPACE: "ml",
                keys.LOCAL_QUEUE: "jobqueue",
                keys.KUEUE_DEFAULT_LOCAL_QUEUE: "jobqueue",
            }
        }
    }
    up_to_date = {"metadata": {"labels": {**existing["metadata"]["labels"], **labels}}}
    assert namespace_patch(up_to_date, labels, annotations) is None


def test_a_level_the_platform_put_on_an_existing_namespace_outlives_the_default():
    existing = {"metadata": {"name": "ml", "labels": {keys.PSA_ENFORCE: "baseline"}}}
    spec = {"target": {"createNamespace": True}}
    labels, _ = namespace_metadata(ws("ml", **spec), "jobqueue", existing)
    assert keys.PSA_ENFORCE not in labels
    assert labels[keys.PSA_WARN] == labels[keys.PSA_AUDIT] == "restricted"
    assert enforced_pod_security(existing, labels) == "baseline"


def test_result_scope_is_removed_when_output_root_is_cleared():
    existing = {"metadata": {"labels": {}, "annotations": {keys.RESULT_SCOPE: "/old"}}}
    _, annotations = namespace_metadata(ws("ml"), "q", existing)
    patch = namespace_patch(existing, {}, annotations)
    assert patch == {"metadata": {"annotations": {keys.RESULT_SCOPE: None}}}


def test_kinds_use_kueue_v1beta2():
    assert k.LOCAL_QUEUES.api_version == "kueue.x-k8s.io/v1beta2"

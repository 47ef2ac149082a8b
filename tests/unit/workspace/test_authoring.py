"""Rendering of `create`, `adopt` and `quota request` objects (no cluster needed)."""

from __future__ import annotations

import pytest

from tau.api.workspace import TauWorkspace
from tau.errors import UsageError
from tau.workspace.authoring import (
    quota_request_name,
    render_adopt,
    render_create,
    render_quota_request,
)


def test_create_renders_a_workspace_rbac_workspace_with_defaults():
    rendered = render_create("research", system_namespace="tau-system", principal_name="ml")
    obj = rendered.obj
    assert obj["metadata"] == {"name": "research", "namespace": "tau-system"}
    spec = obj["spec"]
    assert spec["authorization"] == {"mode": "workspace-rbac"}
    assert spec["principalRef"] == {"provider": "entra", "name": "ml"}
    assert spec["kubernetesSubject"] == {"kind": "Group", "name": "ml"}
    assert spec["role"] == "tau-researcher-v1"
    assert spec["target"] == {"namespace": "research", "createNamespace": True}
    assert spec["defaults"] == {"outputRoot": "/data/projects/research/runs", "priority": "normal"}
    assert "workloadIdentity" not in spec
    TauWorkspace.model_validate(obj)
    assert rendered.notices == []


def test_an_absent_principal_defaults_to_an_inert_group_binding_with_a_notice():
    rendered = render_create("research", system_namespace="tau-system")
    assert rendered.obj["spec"]["principalRef"]["name"] == "research"
    assert "grants nobody" in rendered.notices[0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"principal_name": ""}, "--principal-name must not be empty"),
        ({"subject_kind": "User"}, "--principal-name is required"),
        ({"principal_name": "x", "queue": "other"}, "--queue must be jobqueue in v0"),
        ({"principal_name": "x", "service_account": "sa"}, "both or neither"),
        ({"principal_name": "x", "namespace": "Bad_NS"}, "--namespace 'Bad_NS'"),
        ({"principal_name": "x", "subject_kind": "Robot"}, "--subject-kind must be"),
    ],
)
def test_create_flag_rules(kwargs, message):
    with pytest.raises(UsageError, match=message):
        render_create("research", system_namespace="tau-system", **kwargs)


def test_a_uuid_shaped_name_never_defaults_the_principal():
    with pytest.raises(UsageError, match="--principal-name is required"):
        render_create("0b1f6471-1bf0-4dda-aec3-cb9272f09590", system_namespace="tau-system")


def test_workload_identity_is_rendered_when_both_flags_are_given():
    spec = render_create(
        "research",
        system_namespace="s",
        principal_name="ml",
        service_account="trainer",
        workload_identity_client_id="c1",
    ).obj["spec"]
    assert spec["workloadIdentity"] == {"serviceAccountName": "trainer", "clientId": "c1"}


def test_adopt_renders_a_cluster_wide_workspace_without_principals():
    spec = render_adopt("research", system_namespace="tau-system", namespace="team-a").obj["spec"]
    assert spec["authorization"] == {"mode": "cluster-wide"}
    assert spec["target"] == {"namespace": "team-a", "createNamespace": False}
    assert not {"principalRef", "kubernetesSubject", "role"} & set(spec)
    with pytest.raises(UsageError, match="absolute clean path"):
        render_adopt("research", system_namespace="s", output_root="/data/../x")


def test_quota_requests_are_named_after_workspace_and_resource():
    assert quota_request_name("research", "nvidia.com/gpu") == (
        "research-nvidia-com-gpu-quota-request"
    )
    obj = render_quota_request(
        "research", system_namespace="tau-system", resource="h200", requested=8, reason="sweep"
    )
    assert obj["spec"] == {
        "workspace": "research",
        "resource": "h200",
        "requested": 8,
        "reason": "sweep",
        "mutationMode": "ReportOnly",
    }
    with pytest.raises(UsageError, match=r"--requested must be greater than 0.*--reason is"):
        render_quota_request(
            "research", system_namespace="s", resource="h200", requested=0, reason=""
        )
    with pytest.raises(UsageError, match="ReportOnly"):
        render_quota_request(
            "research",
            system_namespace="s",
            resource="h200",
            requested=1,
            reason="r",
            mutation_mode="ControllerManagedBurst",
        )

"""Offline validation mirrors what the API server enforces, field names stay camelCase."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tau.api.cluster import TauClusterSpec, WorkloadProfile
from tau.api.meta import dump
from tau.api.quota import TauQuotaRequestSpec
from tau.api.workspace import TauWorkspaceSpec

RBAC_SPEC = {
    "principalRef": {"provider": "entra", "name": "researchers"},
    "kubernetesSubject": {"kind": "Group", "name": "researchers"},
    "role": "tau-researcher-v1",
}


def profile(**overrides):
    base = {
        "name": "research.training.1x",
        "gpusPerWorker": 1,
        "workerCount": 1,
        "mode": "fixed",
        "placement": "independent",
        "defaultLocalQueue": "jobqueue",
        "priorities": {
            "workloadPriorityClassName": "taugrid-default",
            "podPriorityClassName": "taugrid-default",
        },
    }
    base.update(overrides)
    return base


def test_workspace_rbac_is_the_default_and_requires_the_subject():
    spec = TauWorkspaceSpec.model_validate(RBAC_SPEC)
    assert spec.authorization.mode == "workspace-rbac"
    with pytest.raises(ValidationError, match="workspace-rbac requires all three"):
        TauWorkspaceSpec.model_validate({"role": "tau-researcher-v1"})


def test_cluster_wide_forbids_subject_and_serializes_without_it():
    spec = TauWorkspaceSpec.model_validate({"authorization": {"mode": "cluster-wide"}})
    wire = dump(spec)
    assert wire["authorization"] == {"mode": "cluster-wide"}
    assert not {"principalRef", "kubernetesSubject", "role"} & set(wire)
    with pytest.raises(ValidationError, match="cluster-wide forbids"):
        TauWorkspaceSpec.model_validate({**RBAC_SPEC, "authorization": {"mode": "cluster-wide"}})


def test_workspace_field_rules():
    with pytest.raises(ValidationError, match="ttlSecondsAfterFinished"):
        TauWorkspaceSpec.model_validate({**RBAC_SPEC, "defaults": {"ttlSecondsAfterFinished": 60}})
    with pytest.raises(ValidationError, match="namespace"):
        TauWorkspaceSpec.model_validate({**RBAC_SPEC, "target": {"namespace": "Bad_NS"}})
    with pytest.raises(ValidationError, match="storage"):
        TauWorkspaceSpec.model_validate({**RBAC_SPEC, "storage": {"pvc": "x"}})


def test_tau_cluster_defaults():
    spec = TauClusterSpec.model_validate({})
    assert dump(spec) == {
        "managementMode": "Observe",
        "deletionPolicy": "Retain",
        "workspaceDefaults": {"defaultQueue": "jobqueue"},
    }


def test_profile_rules():
    WorkloadProfile.model_validate(profile())
    with pytest.raises(ValidationError, match="requires placement multi-node-nccl"):
        WorkloadProfile.model_validate(profile(workerCount=2))
    WorkloadProfile.model_validate(profile(workerCount=2, placement="multi-node-nccl"))
    with pytest.raises(ValidationError, match="multiKueue requires"):
        WorkloadProfile.model_validate(profile(executionTarget="multiKueue"))
    with pytest.raises(ValidationError, match=r"required unless priorities\.disableDefault"):
        WorkloadProfile.model_validate(profile(priorities=None))
    named = profile()["priorities"]
    with pytest.raises(ValidationError, match="must be absent"):
        WorkloadProfile.model_validate(
            profile(priorities={**named, "disableDefaultPriorities": True})
        )
    WorkloadProfile.model_validate(profile(priorities={"disableDefaultPriorities": True}))
    with pytest.raises(ValidationError, match="name"):
        WorkloadProfile.model_validate(profile(name="Research_Training"))


def test_quota_request_defaults_to_report_only():
    spec = TauQuotaRequestSpec.model_validate(
        {"workspace": "ml", "resource": "nvidia.com/gpu", "requested": 8, "reason": "sweep"}
    )
    assert spec.mutation_mode == "ReportOnly"
    with pytest.raises(ValidationError):
        TauQuotaRequestSpec.model_validate({**dump(spec), "mutationMode": "Apply"})
    with pytest.raises(ValidationError):
        TauQuotaRequestSpec.model_validate({**dump(spec), "requested": 0})

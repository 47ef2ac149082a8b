"""Readiness and authorization-contract rules applied to TauWorkspace objects."""

from __future__ import annotations

import pytest

from tau.api.connection import validate_descriptor
from tau.connection import LayerFailure, live_contract, readiness_problem
from tau.connection.verify import check_authorization_contract
from tau.workspace.inspect import workspace_status


def workspace(phase="Ready", generation=3, observed=3, **spec) -> dict:
    return {
        "metadata": {"name": "research", "uid": "u1", "generation": generation},
        "spec": {"authorization": {"mode": "workspace-rbac"}, "role": "tau-researcher-v1", **spec},
        "status": {
            "phase": phase,
            "observedGeneration": observed,
            "target": {"resolvedNamespace": "research"},
            "queue": {"localQueue": "jobqueue", "clusterQueue": "jobqueue"},
            "conditions": [
                {"type": "RBACReady", "status": "True", "reason": "RoleBindingReady"},
                {
                    "type": "QueueReady",
                    "status": "False" if phase != "Ready" else "True",
                    "reason": "QueueNotReady",
                    "message": "backing ClusterQueue jobqueue missing",
                },
                {"type": "DriftDetected", "status": "False", "reason": "NoDrift"},
                {"type": "WorkloadIdentityReady", "status": "Unknown", "reason": "NotConfigured"},
            ],
        },
    }


def descriptor(mode="workspace-rbac", role="tau-researcher-v1"):
    authorization = {"mode": mode}
    if role:
        authorization["requiredRole"] = role
    return validate_descriptor(
        {
            "schema": "tau.workspace.connection.v1",
            "workspace": "research",
            "cluster": {"contextName": "lab"},
            "access": {"method": "kubeconfig"},
            "authorization": authorization,
            "requirements": {"minTauVersion": "0.1.0"},
        },
        "x",
    )


def test_ready_at_the_current_generation_has_no_problem():
    assert readiness_problem(workspace()) == ""


def test_not_ready_names_phase_and_only_the_failing_gate_conditions():
    problem = readiness_problem(workspace("Degraded"))
    assert problem.startswith('TauWorkspace "research" is not Ready (phase=Degraded)')
    assert "QueueReady=False QueueNotReady: backing ClusterQueue jobqueue missing" in problem
    assert "RBACReady" not in problem and "WorkloadIdentityReady" not in problem


@pytest.mark.parametrize(("generation", "observed"), [(3, 2), (0, 0), (3, None)])
def test_a_status_from_an_older_generation_is_stale(generation, observed):
    assert "status is stale" in readiness_problem(
        workspace(generation=generation, observed=observed)
    )


def test_missing_phase_means_pending():
    obj = workspace()
    obj["status"] = {}
    assert "(phase=Pending)" in readiness_problem(obj)


def test_the_live_contract_defaults_mode_and_service_account():
    obj = workspace()
    del obj["spec"]["authorization"]
    live = live_contract(obj)
    assert (live.authorization_mode, live.service_account, live.namespace, live.queue) == (
        "workspace-rbac",
        "default",
        "research",
        "jobqueue",
    )
    obj["spec"]["workloadIdentity"] = {"serviceAccountName": "trainer", "clientId": "c"}
    assert live_contract(obj).service_account == "trainer"


def test_mode_and_role_must_match_the_descriptor():
    live = live_contract(workspace())
    check_authorization_contract(live, descriptor())
    with pytest.raises(LayerFailure) as caught:
        check_authorization_contract(live, descriptor("cluster-wide", None))
    assert caught.value.layer == "authorization"
    assert 'authorization.mode "cluster-wide" but TauWorkspace "research" uses' in (
        caught.value.one_line()
    )
    other_role = live_contract(workspace(role="tau-reader"))
    with pytest.raises(LayerFailure, match="binds"):
        check_authorization_contract(other_role, descriptor())


def test_status_view_gives_owners_only_to_failing_conditions():
    view = workspace_status(workspace("Degraded"))
    owners = {c["type"]: c["owner"] for c in view["conditions"]}
    assert owners["QueueReady"] == "platform operator"
    assert owners["RBACReady"] == "" and owners["DriftDetected"] == ""
    assert view["ready"] is False
    assert view["resolved"]["serviceAccount"] == "default"

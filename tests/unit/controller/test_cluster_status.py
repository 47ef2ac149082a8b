"""TauCluster status pieces: spec hash, non-singleton objects, condition order."""

from __future__ import annotations

from tau.controller.cluster import CONDITION_ORDER, desired_state_hash, non_singleton_conditions


def test_implicit_and_explicit_defaults_hash_equally():
    explicit = {
        "managementMode": "Observe",
        "deletionPolicy": "Retain",
        "workspaceDefaults": {"defaultQueue": "jobqueue"},
    }
    assert desired_state_hash({}) == desired_state_hash(explicit)
    assert desired_state_hash({}) != desired_state_hash({"managementMode": "Reconcile"})
    assert len(desired_state_hash({})) == 64


def test_non_singleton_reports_invalid_name_in_the_documented_order():
    conditions = non_singleton_conditions(4)
    assert [c["type"] for c in conditions] == list(CONDITION_ORDER)
    summary = {c["type"]: (c["status"], c["reason"]) for c in conditions}
    assert summary["Ready"] == ("False", "InvalidSingletonName")
    assert summary["ObserveOnly"] == ("True", "InvalidSingletonName")
    assert summary["NodesReady"] == ("Unknown", "ObservationSkipped")
    assert summary["QueuesReady"] == ("Unknown", "ObservationPending")
    assert all(c["observedGeneration"] == 4 for c in conditions)

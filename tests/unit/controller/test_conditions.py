"""Condition merging keeps history honest; the phase rule decides what Ready means."""

from __future__ import annotations

from tau.controller.conditions import (
    condition,
    merge_conditions,
    semantically_equal,
    workspace_phase,
)


def test_merge_keeps_the_last_entry_per_type_in_first_position():
    merged = merge_conditions(
        [],
        [
            condition("A", True, "First"),
            condition("B", True, "B"),
            condition("A", False, "Second"),
        ],
        now="T1",
    )
    assert [(c["type"], c["reason"]) for c in merged] == [("A", "Second"), ("B", "B")]


def test_transition_time_moves_only_when_status_reason_or_message_change():
    first = merge_conditions([], [condition("A", True, "R", "m")], now="T1")
    same = merge_conditions(first, [condition("A", True, "R", "m")], now="T2")
    new_message = merge_conditions(first, [condition("A", True, "R", "other")], now="T3")
    assert same[0]["lastTransitionTime"] == "T1"
    assert new_message[0]["lastTransitionTime"] == "T3"


def test_phase_rule():
    def phase(**statuses):
        return workspace_phase([condition(t, s, "R") for t, s in statuses.items()])

    assert phase(RBACReady=True, QueueReady=True, DriftDetected=False) == "Ready"
    assert phase(RBACReady=True, QueueReady=True, DriftDetected=True) == "Degraded"
    assert phase(RBACReady=True, QueueReady=False) == "Degraded"
    assert phase(RBACReady=True) == "Pending"
    assert phase(RBACReady="Unknown", QueueReady=True) == "Pending"
    # Workload identity is diagnostic only.
    assert phase(RBACReady=True, QueueReady=True, WorkloadIdentityReady=False) == "Ready"


def test_semantic_equality_ignores_empty_fields():
    assert semantically_equal({"phase": "Ready", "queue": {}}, {"phase": "Ready"})
    assert not semantically_equal({"phase": "Ready"}, {"phase": "Degraded"})
    assert not semantically_equal(None, {"phase": "Ready"})

"""Node label rules: validated, conflict-checked, applied only where they match."""

from __future__ import annotations

from tau.controller.cluster import (
    finish_node_conditions,
    mode_conditions,
    node_outcome,
)
from tau.controller.nodes import plan_nodes, rule_conflicts, rule_problems

H200 = "Standard_ND96isr_H200_v5"
H200_RULE = {
    "match": {"vmSizes": [H200]},
    "labels": {"kueue.azure.com/gpu-series": "nd-h200-v5", "tau.azure.com/gpu-class": "h200-141gb"},
}


def node(name, vm, **labels):
    return {
        "metadata": {
            "name": name,
            "labels": {"node.kubernetes.io/instance-type": vm, **labels},
        }
    }


def by_type(conditions):
    return {c["type"]: (c["status"], c["reason"]) for c in conditions}


def test_reserved_prefixes_and_invalid_keys_are_rejected():
    problems = rule_problems(
        [
            {"labels": {"kubernetes.io/role": "gpu"}},
            {"labels": {"node.kubernetes.io/pool": "x"}},
            {"labels": {"bad key": "x", "ok/key": "bad value!"}},
            {"labels": {}},
        ]
    )
    assert any("reserved prefix" in p and "kubernetes.io/role" in p for p in problems)
    assert any("node.kubernetes.io/pool" in p for p in problems)
    assert any("'bad key'" in p for p in problems)
    assert any("invalid value" in p for p in problems)
    assert any("labels must not be empty" in p for p in problems)
    assert rule_problems([H200_RULE]) == []


def test_conflicts_need_overlap_and_different_values():
    other_value = {"match": {"vmSizes": [H200, "X"]}, "labels": {"tau.azure.com/gpu-class": "h200"}}
    disjoint = {"match": {"vmSizes": ["X"]}, "labels": {"tau.azure.com/gpu-class": "other"}}
    everywhere = {"labels": {"tau.azure.com/gpu-class": "cpu"}}
    assert len(rule_conflicts([H200_RULE, other_value])) == 1
    assert rule_conflicts([H200_RULE, disjoint]) == []
    assert len(rule_conflicts([H200_RULE, everywhere])) == 1
    assert rule_conflicts([H200_RULE, dict(H200_RULE)]) == []


def test_plan_labels_only_selected_matching_nodes():
    nodes = [
        node("gpu-0", H200, pool="a"),
        node("gpu-1", H200, pool="a", **H200_RULE["labels"]),
        node(
            "gpu-stale", H200, pool="a", **{**H200_RULE["labels"], "tau.azure.com/gpu-class": "x"}
        ),
        node("cpu-0", "Standard_D16ds_v5", pool="a"),
        node("gpu-other-pool", H200, pool="b"),
    ]
    plan = plan_nodes([H200_RULE], nodes, {"pool": "a"})
    assert (plan.observed, plan.ready) == (3, 1)
    assert plan.patches == {
        "gpu-0": H200_RULE["labels"],
        "gpu-stale": {"tau.azure.com/gpu-class": "h200-141gb"},
    }


def test_observe_mode_reports_drift_and_never_ready():
    conds, counts, patches, failed = node_outcome(
        {"nodes": {"labelRules": [H200_RULE]}}, [node("gpu-0", H200)], "", 1
    )
    assert conds == [] and not failed and patches
    final = by_type(finish_node_conditions(counts, [], 1))
    assert final["NodesReady"] == ("False", "NodeLabelDrift")
    assert final["DriftDetected"] == ("True", "NodeLabelDrift")
    assert counts == {"observed": 1, "ready": 0, "drifted": 1}
    mode, phase = mode_conditions("Observe", False, False, 1)
    assert by_type(mode) == {
        "ObserveOnly": ("True", "ObserveMode"),
        "ReconcilePaused": ("False", "ObserveMode"),
        "Ready": ("False", "ObservationPending"),
    }
    assert phase == "Pending"


def test_reconcile_mode_ready_after_patching():
    counts = {"observed": 2, "ready": 2, "drifted": 0}
    final = by_type(finish_node_conditions(counts, [], 1))
    assert final["NodesReady"] == ("True", "NodeLabelsReady")
    mode, phase = mode_conditions("Reconcile", True, False, 1)
    assert by_type(mode)["ReconcilePaused"] == ("False", "NodeReconciliationActive")
    assert by_type(mode)["Ready"] == ("True", "NodeReconciliationReady")
    assert phase == "Ready"
    failed = by_type(finish_node_conditions(counts, ["node x: forbidden"], 1))
    assert failed["NodesReady"] == ("False", "NodeLabelReconcileFailed")
    assert mode_conditions("Reconcile", False, True, 1)[1] == "Degraded"


def test_conflicting_rules_degrade_without_mutation():
    rules = [H200_RULE, {"match": {"vmSizes": [H200]}, "labels": {"tau.azure.com/gpu-class": "x"}}]
    conds, _, patches, failed = node_outcome(
        {"nodes": {"labelRules": rules}}, [node("n", H200)], "", 2
    )
    assert failed and patches == {}
    assert by_type(conds) == {
        "NodesReady": ("False", "ConflictingNodeLabelRules"),
        "DriftDetected": ("True", "NodeLabelRuleConflict"),
        "OwnershipConflict": ("True", "ConflictingNodeLabelRules"),
    }


def test_no_rules_and_no_matching_nodes_are_healthy():
    conds, *_ = node_outcome({}, [], "", 1)
    assert by_type(conds)["NodesReady"] == ("True", "NoNodeLabelRules")
    final = by_type(finish_node_conditions({"observed": 0, "ready": 0, "drifted": 0}, [], 1))
    assert final["NodesReady"] == ("True", "NoMatchingNodes")

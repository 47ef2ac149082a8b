"""TauCluster reconciler: node labels, workload-profile resolution, capability conditions.

Only the singleton `cluster` does work. Profile resolution is read-only in both modes; node
labels are patched only in Reconcile mode. Status is rewritten only when it changes. A pass
reads Nodes and the Kueue objects from the watch-fed `ClusterInputs` (cache.py), so a pass
that changes nothing sends one GET (the TauCluster) and no write.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from pydantic import ValidationError

from tau import keys
from tau.api.cluster import SINGLETON_NAME, TauClusterSpec
from tau.api.meta import dump
from tau.controller import kubeapi as k
from tau.controller.cache import ClusterInputs
from tau.controller.conditions import (
    Condition,
    condition,
    merge_conditions,
    semantically_equal,
)
from tau.controller.nodes import plan_nodes, rule_conflicts, rule_problems
from tau.controller.profiles import multikueue_condition, resolve_profile_set
from tau.kube.errors import KubeError

log = logging.getLogger(__name__)

REQUEUE = 600.0
SYNC_WAIT = 0.5  # until every input type is listed once
# Node patches in flight: labelling a new pool of hundreds of nodes waits on API round trips,
# not on this process.
PATCH_CONCURRENCY = 8
CONDITION_ORDER = (
    keys.COND_NODES_READY,
    keys.COND_WORKLOAD_PROFILES_READY,
    keys.COND_MULTIKUEUE_READY,
    keys.COND_QUEUES_READY,
    keys.COND_WORKSPACES_READY,
    keys.COND_DRIFT_DETECTED,
    keys.COND_OWNERSHIP_CONFLICT,
    keys.COND_DELETION_BLOCKED,
    keys.COND_OBSERVE_ONLY,
    keys.COND_RECONCILE_PAUSED,
    keys.COND_READY,
)


def desired_state_hash(spec: dict[str, Any]) -> str:
    """SHA-256 of the defaulted spec, so implicit and explicit defaults hash equally."""
    try:
        canonical = dump(TauClusterSpec.model_validate(spec))
    except ValidationError:
        canonical = spec
    encoded = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


def non_singleton_conditions(generation: int) -> list[dict[str, Any]]:
    skipped, pending = "ObservationSkipped", "ObservationPending"
    why = f"only the TauCluster named {SINGLETON_NAME!r} is reconciled"
    rows = [
        (keys.COND_NODES_READY, "Unknown", skipped),
        (keys.COND_WORKLOAD_PROFILES_READY, "Unknown", skipped),
        (keys.COND_MULTIKUEUE_READY, "Unknown", skipped),
        (keys.COND_QUEUES_READY, "Unknown", pending),
        (keys.COND_WORKSPACES_READY, "Unknown", pending),
        (keys.COND_DRIFT_DETECTED, "Unknown", skipped),
        (keys.COND_OWNERSHIP_CONFLICT, "False", "NoConflictObserved"),
        (keys.COND_DELETION_BLOCKED, "False", "NoDeletionBlock"),
        (keys.COND_OBSERVE_ONLY, "True", "InvalidSingletonName"),
        (keys.COND_RECONCILE_PAUSED, "True", "InvalidSingletonName"),
        (keys.COND_READY, "False", "InvalidSingletonName"),
    ]
    return [
        condition(t, s, r, why if r == "InvalidSingletonName" else "", generation)
        for t, s, r in rows
    ]


def node_outcome(
    spec: dict[str, Any], nodes: list[dict[str, Any]] | None, list_error: str, generation: int
) -> tuple[list[dict[str, Any]], dict[str, int], dict[str, dict[str, str]], bool]:
    """Node conditions (NodesReady, DriftDetected, OwnershipConflict), counts, the patches a
    Reconcile pass would apply, and whether node reconciliation failed."""
    rules = (spec.get("nodes") or {}).get("labelRules") or []
    selector = (spec.get("nodes") or {}).get("selector") or {}
    counts = {"observed": 0, "ready": 0, "drifted": 0}

    def conds(
        nodes_ready: tuple[str, str, str],
        drift: tuple[str, str, str],
        conflict: tuple[str, str, str] = ("False", "NoConflictObserved", ""),
    ) -> list[Condition]:
        return [
            condition(
                keys.COND_NODES_READY, nodes_ready[0], nodes_ready[1], nodes_ready[2], generation
            ),
            condition(keys.COND_DRIFT_DETECTED, drift[0], drift[1], drift[2], generation),
            condition(
                keys.COND_OWNERSHIP_CONFLICT, conflict[0], conflict[1], conflict[2], generation
            ),
        ]

    if not rules:
        return (
            conds(("True", "NoNodeLabelRules", ""), ("False", "NoNodeLabelDrift", "")),
            counts,
            {},
            False,
        )
    problems = rule_problems(rules)
    if problems:
        message = "; ".join(problems)
        return (
            conds(
                ("False", "InvalidNodeLabelRules", message),
                ("Unknown", "InvalidNodeLabelRules", message),
            ),
            counts,
            {},
            True,
        )
    conflicts = rule_conflicts(rules)
    if conflicts:
        message = "; ".join(conflicts)
        return (
            conds(
                ("False", "ConflictingNodeLabelRules", message),
                ("True", "NodeLabelRuleConflict", message),
                ("True", "ConflictingNodeLabelRules", message),
            ),
            counts,
            {},
            True,
        )
    if nodes is None:
        return (
            conds(
                ("False", "NodeDiscoveryFailed", list_error),
                ("Unknown", "NodeDiscoveryFailed", list_error),
            ),
            counts,
            {},
            True,
        )
    plan = plan_nodes(rules, nodes, selector)
    counts = {
        "observed": plan.observed,
        "ready": plan.ready,
        "drifted": plan.drifted + len(plan.patches),
    }
    return [], counts, plan.patches, False


def finish_node_conditions(
    counts: dict[str, int], patch_errors: list[str], generation: int
) -> list[dict[str, Any]]:
    no_conflict = condition(
        keys.COND_OWNERSHIP_CONFLICT, False, "NoConflictObserved", "", generation
    )
    if patch_errors:
        message = "; ".join(patch_errors)
        return [
            condition(
                keys.COND_NODES_READY, False, "NodeLabelReconcileFailed", message, generation
            ),
            condition(keys.COND_DRIFT_DETECTED, True, "NodeLabelDrift", message, generation),
            no_conflict,
        ]
    if counts["observed"] == 0:
        return [
            condition(
                keys.COND_NODES_READY,
                True,
                "NoMatchingNodes",
                "no node matches a label rule",
                generation,
            ),
            condition(keys.COND_DRIFT_DETECTED, False, "NoNodeLabelDrift", "", generation),
            no_conflict,
        ]
    if counts["drifted"]:
        message = f"{counts['drifted']} of {counts['observed']} matching nodes lack rule labels"
        return [
            condition(keys.COND_NODES_READY, False, "NodeLabelDrift", message, generation),
            condition(keys.COND_DRIFT_DETECTED, True, "NodeLabelDrift", message, generation),
            no_conflict,
        ]
    message = f"{counts['ready']} matching nodes carry their rule labels"
    return [
        condition(keys.COND_NODES_READY, True, "NodeLabelsReady", message, generation),
        condition(keys.COND_DRIFT_DETECTED, False, "NoNodeLabelDrift", "", generation),
        no_conflict,
    ]


def mode_conditions(
    mode: str, nodes_ready: bool, failed: bool, generation: int
) -> tuple[list[dict[str, Any]], str]:
    """ObserveOnly, ReconcilePaused, Ready and the phase for the management mode."""
    if mode == "Reconcile":
        ready = nodes_ready and not failed
        conds = [
            condition(keys.COND_OBSERVE_ONLY, False, "ReconcileMode", "", generation),
            condition(
                keys.COND_RECONCILE_PAUSED, False, "NodeReconciliationActive", "", generation
            ),
            condition(
                keys.COND_READY,
                ready,
                "NodeReconciliationReady" if ready else "PartialReconciliation",
                "",
                generation,
            ),
        ]
        return conds, "Ready" if ready else ("Degraded" if failed else "Pending")
    conds = [
        condition(keys.COND_OBSERVE_ONLY, True, "ObserveMode", "", generation),
        condition(keys.COND_RECONCILE_PAUSED, False, "ObserveMode", "", generation),
        condition(
            keys.COND_READY, False, "ObservationPending", "Observe mode never mutates", generation
        ),
    ]
    return conds, "Degraded" if failed else "Pending"


class ClusterReconciler:
    def __init__(self, client: k.ControllerClient, inputs: ClusterInputs) -> None:
        self.client = client
        self.inputs = inputs

    def reconcile(self, name: str) -> float | None:
        if not self.inputs.synced():
            return SYNC_WAIT
        obj = self.client.get_or_none(k.TAU_CLUSTERS, name)
        if obj is None:
            return None
        status = self.compute_status(obj)
        previous = obj.get("status") or {}
        if not semantically_equal(previous, status):
            self.client.replace(k.TAU_CLUSTERS, {**obj, "status": status}, subresource="status")
        return REQUEUE

    def _label(self, patches: dict[str, dict[str, str]]) -> list[str]:
        """Merge-patch each node's missing labels; the failures, one line per node.

        The inputs expect the patched labels first, so the watch event of each patch that
        takes (labels this pass already counts) queues no further pass.
        """
        before = self.inputs.expect_labels(patches)
        outcomes = self.client.patch_each(
            k.NODES,
            [(name, {"metadata": {"labels": labels}}) for name, labels in sorted(patches.items())],
            concurrency=PATCH_CONCURRENCY,
        )
        failed = [(name, error) for name, error in outcomes if error is not None]
        self.inputs.unexpect_labels(before, [name for name, _ in failed])
        return [f"node {name}: {error.message}" for name, error in failed]

    def compute_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        generation = meta.get("generation", 0)
        spec = obj.get("spec") or {}
        previous = obj.get("status") or {}
        status: dict[str, Any] = {
            "observedGeneration": generation,
            "desiredStateHash": desired_state_hash(spec),
            "managedResources": [],
        }
        if meta["name"] != SINGLETON_NAME:
            status["phase"] = "Degraded"
            status["conditions"] = merge_conditions(
                previous.get("conditions"), non_singleton_conditions(generation)
            )
            return status

        mode = spec.get("managementMode") or "Observe"
        nodes, list_error = None, ""
        try:
            nodes = self.inputs.list(k.NODES)
        except KubeError as error:
            list_error = error.message
        node_conds, counts, patches, failed = node_outcome(spec, nodes, list_error, generation)
        if not node_conds:
            errors = self._label(patches) if mode == "Reconcile" and patches else []
            if mode == "Reconcile":
                labelled = len(patches) - len(errors)
                counts["ready"] += labelled
                counts["drifted"] -= labelled
            failed = bool(errors)
            node_conds = finish_node_conditions(counts, errors, generation)
        status["nodes"] = counts

        multikueue = multikueue_condition(self.inputs, generation)
        profiles, profiles_cond = resolve_profile_set(
            spec, self.inputs, multikueue, generation, previous.get("workloadProfiles")
        )
        status["workloadProfiles"] = profiles

        nodes_ready = node_conds[0]["status"] == "True"
        mode_conds, phase = mode_conditions(mode, nodes_ready, failed, generation)
        fixed = [
            condition(keys.COND_QUEUES_READY, "Unknown", "ObservationPending", "", generation),
            condition(keys.COND_WORKSPACES_READY, "Unknown", "ObservationPending", "", generation),
            condition(keys.COND_DELETION_BLOCKED, False, "NoDeletionBlock", "", generation),
        ]
        by_type = {
            c["type"]: c for c in [*node_conds, profiles_cond, multikueue, *fixed, *mode_conds]
        }
        ordered = [by_type[t] for t in CONDITION_ORDER]
        status["phase"] = phase
        status["conditions"] = merge_conditions(previous.get("conditions"), ordered)
        return status

"""TauQuotaRequest reconciler: report the platform's decision; never touch Kueue quota.

Decisions are the platform-owned annotations (guarded by the chart's admission policy);
an approval is ReportOnly: the quota change itself goes through GitOps.
"""

from __future__ import annotations

from typing import Any

from tau import keys
from tau.controller import kubeapi as k
from tau.controller.conditions import condition, merge_conditions, semantically_equal


def decide(obj: dict[str, Any]) -> dict[str, Any]:
    """The status a request's annotations call for (rejection wins over approval)."""
    meta = obj["metadata"]
    annotations = meta.get("annotations") or {}
    generation = meta.get("generation", 0)
    status: dict[str, Any] = {"observedGeneration": generation}
    if annotations.get(keys.QUOTA_REJECTED) == "true":
        status["phase"] = "Rejected"
        status["decision"] = "rejected by platform"
        conds = [
            condition(keys.COND_APPROVED, False, "Rejected", "rejected by platform", generation)
        ]
    elif annotations.get(keys.QUOTA_APPROVED) == "true":
        status["phase"] = "Approved"
        status["decision"] = (
            "approved in ReportOnly mode; waiting for the platform's GitOps change to apply quota"
        )
        conds = [
            condition(keys.COND_APPROVED, True, "Approved", "approved by platform", generation),
            condition(
                keys.COND_QUOTA_MUTATED,
                False,
                "ReportOnly",
                "the controller never changes Kueue quota",
                generation,
            ),
        ]
    else:
        status["phase"] = "PendingApproval"
        conds = [
            condition(
                keys.COND_APPROVED,
                False,
                "PendingApproval",
                "waiting for a platform decision",
                generation,
            )
        ]
    if annotations.get(keys.QUOTA_REVIEWED_BY):
        status["approvedBy"] = annotations[keys.QUOTA_REVIEWED_BY]
    previous = (obj.get("status") or {}).get("conditions")
    status["conditions"] = merge_conditions(previous, conds)
    return status


class QuotaReconciler:
    def __init__(self, client: k.ControllerClient, system_namespace: str) -> None:
        self.client = client
        self.system_namespace = system_namespace

    def reconcile(self, namespace: str, name: str) -> float | None:
        if namespace != self.system_namespace:
            return None
        obj = self.client.get_or_none(k.TAU_QUOTA_REQUESTS, name, namespace)
        if obj is None:
            return None
        status = decide(obj)
        if not semantically_equal(obj.get("status"), status):
            self.client.replace(
                k.TAU_QUOTA_REQUESTS, {**obj, "status": status}, subresource="status"
            )
        return None

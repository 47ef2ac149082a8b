"""Condition bookkeeping shared by every reconciler (Kubernetes metav1.Condition semantics).

Status writes are skipped when nothing changed, so a condition keeps its previous
lastTransitionTime unless its status, reason or message actually moved.
"""

from __future__ import annotations

from typing import Any

from tau import keys
from tau.api.meta import now_rfc3339

Condition = dict[str, Any]


def condition(
    type_: str, status: str | bool, reason: str, message: str = "", generation: int = 0
) -> Condition:
    if isinstance(status, bool):
        status = "True" if status else "False"
    return {
        "type": type_,
        "status": status,
        "observedGeneration": generation,
        "reason": reason,
        "message": message,
    }


def merge_conditions(
    previous: list[Condition] | None, desired: list[Condition], now: str | None = None
) -> list[Condition]:
    """Desired conditions, deduplicated by type (last one wins, first position kept), with the
    previous lastTransitionTime kept wherever status, reason and message are unchanged."""
    now = now or now_rfc3339()
    before = {c.get("type"): c for c in previous or []}
    order: list[str] = []
    latest: dict[str, Condition] = {}
    for item in desired:
        if item["type"] not in latest:
            order.append(item["type"])
        latest[item["type"]] = item
    merged = []
    for type_ in order:
        item = dict(latest[type_])
        old = before.get(type_)
        unchanged = old is not None and all(
            old.get(field, "") == item.get(field, "") for field in ("status", "reason", "message")
        )
        item["lastTransitionTime"] = (
            old.get("lastTransitionTime") or now if unchanged and old else now
        )
        merged.append(item)
    return merged


def find(conditions: list[Condition] | None, type_: str) -> Condition | None:
    for item in conditions or []:
        if item.get("type") == type_:
            return item
    return None


def workspace_phase(conditions: list[Condition]) -> str:
    """Degraded on drift; Ready when RBAC and queue are True; Pending while unknown."""
    drift = find(conditions, keys.COND_DRIFT_DETECTED)
    if drift and drift["status"] == "True":
        return "Degraded"
    gates = [find(conditions, keys.COND_RBAC_READY), find(conditions, keys.COND_QUEUE_READY)]
    statuses = [gate["status"] if gate else "Unknown" for gate in gates]
    if all(status == "True" for status in statuses):
        return "Ready"
    if any(status == "False" for status in statuses):
        return "Degraded"
    return "Pending"


def semantically_equal(old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    """True when writing `new` would change nothing a reader can observe."""
    return _strip_empty(old or {}) == _strip_empty(new)


def _strip_empty(value: object) -> object:
    if isinstance(value, dict):
        cleaned = {k: _strip_empty(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v not in (None, "", [], {})}
    if isinstance(value, list):
        return [_strip_empty(v) for v in value]
    return value

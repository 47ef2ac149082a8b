"""`experiment compare`: per-group statistics of each run's latest value, and the winner."""

from __future__ import annotations

import statistics
from typing import Any

from tau.errors import UsageError
from tau.evidence import query
from tau.evidence.store import Store


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def compare(
    store: Store, target: str, metrics: list[str], direction: str = ""
) -> list[dict[str, Any]]:
    if direction and direction not in ("max", "min"):
        raise UsageError(f"--direction {direction!r} must be max or min", owner="the user")
    with query.reader(store) as db:
        _, run_ids = query.resolve_target(db, target)
        rows = query.latest_by_group(db, run_ids)
    wanted = metrics or sorted({r["metric_name"] for r in rows})
    result = []
    for metric in wanted:
        way = direction or (
            "min"
            if any(t in metric.lower() for t in ("loss", "error", "rmse", "perplexity"))
            else "max"
        )
        groups: dict[str, list[Any]] = {}
        for row in rows:
            if row["metric_name"] == metric and row["latest_value"] is not None:
                groups.setdefault(row["run_group_id"], []).append(row)
        group_rows = []
        for group, members in sorted(groups.items()):
            values = [m["latest_value"] for m in members]
            best = (min if way == "min" else max)(members, key=lambda m: m["latest_value"])
            group_rows.append(
                {
                    "metric_name": metric,
                    "direction": way,
                    "run_group_id": group,
                    "run_count": len(members),
                    "latest_step": max((m["latest_step"] or 0) for m in members),
                    "min": min(values),
                    "p25": _quantile(values, 0.25),
                    "median": statistics.median(values),
                    "p75": _quantile(values, 0.75),
                    "max": max(values),
                    "best_value": best["latest_value"],
                    "best_run_id": best["run_id"],
                    "winner": False,
                }
            )
        if group_rows:
            pick = min if way == "min" else max
            pick(group_rows, key=lambda g: g["best_value"])["winner"] = True
        result += group_rows
    return result

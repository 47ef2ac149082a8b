"""The Stellar snapshot: everything a dashboard shows for one target, as plain JSON data.

The HTML report, the terminal view, `plot` and the HTTP server all render this one shape,
so they can never disagree about what a run logged.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tau.evidence import query
from tau.evidence.series import finite_or_none, read_series
from tau.evidence.store import Store
from tau.portal.downsample import lttb

SNAPSHOT_SCHEMA = "tau.stellar.snapshot.v1"
DEFAULT_MAX_POINTS = 2000
PRIMARY_HINTS = ("loss", "accuracy", "acc", "reward", "return", "score")


def primary_metrics(names: list[str]) -> list[str]:
    """Loss/accuracy-like metrics first (the charts users open a dashboard for)."""

    def rank(name: str) -> tuple[int, str]:
        lowered = name.lower()
        for index, hint in enumerate(PRIMARY_HINTS):
            if hint in lowered:
                return index, name
        return len(PRIMARY_HINTS), name

    return sorted(names, key=rank)


def build_snapshot(
    store: Store,
    target: str,
    *,
    metrics: list[str] | None = None,
    max_points: int = DEFAULT_MAX_POINTS,
) -> dict[str, Any]:
    """Reads only: a dashboard never writes the store (no summary backfill, no migration)."""
    with query.reader(store) as db:
        target_type, run_ids = query.resolve_target(db, target)
        runs = query.runs_by_id(db, run_ids)
        summaries: dict[str, dict[str, Any]] = {}
        for row in query.summary_rows(db, run_ids):
            summaries.setdefault(row["run_id"], {})[row["metric_name"]] = {
                key: finite_or_none(row[key])
                for key in (
                    "count",
                    "finite_count",
                    "non_finite_count",
                    "min_step",
                    "max_step",
                    "latest_step",
                    "latest_value",
                    "min_value",
                    "max_value",
                )
            }
        configs = query.configs_by_run(db, run_ids)
        tags = query.tags_by_run(db)
    artifacts = [
        {
            k: row[k]
            for k in (
                "artifact_id",
                "run_id",
                "type",
                "name",
                "uri",
                "direction",
                "step",
                "caption",
            )
        }
        for row in query.artifacts_for(store, target)
    ]
    all_metrics = sorted({m for run in summaries.values() for m in run})
    chosen = [m for m in metrics if m in all_metrics] if metrics else primary_metrics(all_metrics)
    raw = read_series(store, [r["run_id"] for r in runs], chosen, envelope=2 * max_points)
    series: dict[str, list[dict[str, Any]]] = {}
    for metric in chosen:
        for run in runs:
            found = raw.get((run["run_id"], metric))
            if found is None:
                continue
            xs, ys = lttb(found.steps, found.values, max_points)
            series.setdefault(metric, []).append(
                {
                    "run_id": run["run_id"],
                    "x": xs,
                    "y": ys,
                    "points": found.points,
                    "non_finite": found.non_finite,
                    "downsampled": len(xs) < found.points,
                }
            )
    return {
        "schema": SNAPSHOT_SCHEMA,
        "generated_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "store_path": str(store.root),
        "target": target,
        "target_type": target_type,
        "runs": [
            {
                **run,
                "lifecycle": query.lifecycle(
                    run, summaries.get(run["run_id"], {}), tags.get(run["run_id"], {})
                ),
                "tags": tags.get(run["run_id"], {}),
            }
            for run in runs
        ],
        "metrics": [m for m in chosen if m in series],
        "summaries": summaries,
        "configs": configs,
        "artifacts": artifacts,
        "series": series,
        "max_points": max_points,
    }

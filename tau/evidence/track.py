"""`experiment track`: record a run with its configs, artifacts, tags and scalar metrics."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.errors import ValidationError
from tau.evidence import points, records
from tau.evidence.store import Store, canonical_json, request_hash

TRACK_WRITE_VERSION = "tau.exp.track.v0"


@dataclass
class TrackRequest:
    run: records.RunRecord
    configs: list[tuple[Path, str]] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    step: int | None = None
    wall_time: str = ""
    metric_source: str = "tau"
    split: str = ""
    unit: str = ""
    idempotency_key: str = ""


def parse_wall_time(text: str, flag: str = "--wall-time") -> datetime:
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError(
            f"{flag} {text!r} is not an RFC3339 timestamp", owner="the user"
        ) from None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def track_run(root: Path | str, request: TrackRequest) -> dict[str, Any]:
    store = Store.open(root)
    run = request.run.resolved(store)
    configs = [records.config_row(path, run.run_id, fmt) for path, fmt in request.configs]
    if configs and not run.config_hash:
        run.config_hash = records.combined_config_hash([c["config_hash"] for c in configs])
    artifacts = [records.artifact_row(run.run_id, spec) for spec in request.artifacts]
    for name, value in request.metrics.items():
        if not name.strip():
            raise ValidationError("--metric needs a non-empty name (name=value)", owner="the user")
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ValidationError(f"--metric {name}: value must be a number", owner="the user")
    stable_run = asdict(run)
    if not request.run.created_at:
        stable_run.pop("created_at")
    req = request_hash(
        {
            "run": stable_run,
            "configs": [(c["config_hash"], c["format"]) for c in configs],
            "artifacts": [{k: v for k, v in a.items() if k != "created_at"} for a in artifacts],
            "metrics": request.metrics,
            "step": request.step,
            "wall_time": request.wall_time,
            "source": request.metric_source,
            "split": request.split,
            "unit": request.unit,
        }
    )
    result: dict[str, Any] = {"run_id": run.run_id, "project": run.project, "reused": True}
    with store.mutate() as txn:
        if txn.claim_key(
            request.idempotency_key,
            command="track",
            target_type="run",
            target_id=run.run_id,
            request_hash=req,
        ):
            return result
        created = [records.upsert_run(txn, run)]
        created += [txn.ensure("configs", c, ["config_hash", "run_id"]) for c in configs]
        created += [records.record_artifact(txn, a) for a in artifacts]
        if request.metrics:
            written = _write_metrics(txn, run, request, req)
            created.append(written.created)
            result["metric_rows"] = written.row_count
            result["metric_file"] = written.path
        result["reused"] = not any(created) and set(txn.created) <= {"idempotency_keys"}
    result["state"] = run.state
    return result


def _write_metrics(
    txn: Any, run: records.RunRecord, request: TrackRequest, req: str
) -> points.MetricFile:
    wall = parse_wall_time(request.wall_time) if request.wall_time else datetime.now(UTC)
    tags = dict(run.tags)
    tags["tau.metric.source"] = "track"
    tags["tau.metric.write_version"] = TRACK_WRITE_VERSION
    tag_text = canonical_json(tags)
    rows = [
        {
            "project": run.project,
            "run_group_id": run.run_group_id,
            "run_id": run.run_id,
            "metric_name": name.strip(),
            "step": request.step,
            "wall_time": wall,
            "value": float(value) if math.isfinite(value) else value,
            "unit": request.unit or None,
            "source": request.metric_source,
            "split": request.split or None,
            "tags": tag_text,
        }
        for name, value in sorted(request.metrics.items())
    ]
    hash12 = req[:12]
    return points.write_metric_file(
        txn,
        points.from_rows(rows),
        rel_path=(
            f"metrics/project={run.project}/group={run.run_group_id}/run={run.run_id}/"
            f"track-{hash12}.parquet"
        ),
        file_id=f"track-{run.run_id}-{hash12}",
        project=run.project,
        run_group_id=run.run_group_id,
        run_id=run.run_id,
    )

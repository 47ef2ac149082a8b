"""The model registry: durable run checkpoints indexed by model, with movable aliases.

A row (`model-registry/models/<model>/runs/<run>.json`) points at a finished run's
directory on the data PVC; it never moves checkpoint bytes. Rows are derived: a run leaves
`model.json`, `metrics.json` and/or `artifacts.json` in its directory and `index rebuild`
turns them into rows. `best` and aliases choose among rows; serving resolves them with
`resolve_model_ref`.
"""

from __future__ import annotations

import json
import math
import posixpath
from dataclasses import dataclass
from typing import Any, Literal

from tau.data import layout
from tau.data.clock import Clock, utc_now
from tau.data.load import read
from tau.data.records import MODEL_KIND, ModelAlias, ModelRecord, PrimaryMetric
from tau.data.refs import SEGMENT, ModelRef, parse_model, segment
from tau.data.root import Root, Scope
from tau.errors import RuntimeFailure, UsageError

SCOPE = (Scope(layout.MODELS),)
REBUILD_SCOPE = (
    *SCOPE,
    *(
        Scope(runs, depth=2, names=(layout.MODEL_RECORD, layout.METRICS, layout.ARTIFACTS))
        for runs in layout.RUN_ROOTS
    ),
)
DEFAULT_MODEL = "unknown"
PRIMARY_CANDIDATES = ("loss", "eval.loss", "workload.loss", "train.loss", "score", "accuracy")
DIRECTIONS = ("lower", "higher")
RESEARCHER = "researcher (model registry)"


def default_direction(metric: str) -> Literal["lower", "higher"]:
    return "lower" if "loss" in metric.lower() else "higher"


def models(root: Root) -> list[str]:
    return [m for m in root.listdir(layout.MODELS) if SEGMENT.match(m)]


def runs(root: Root, model: str) -> tuple[list[ModelRecord], list[str]]:
    rows, warnings = [], []
    for entry in root.listdir(layout.model_runs(model)):
        if not entry.endswith(".json") or entry.startswith("."):
            continue
        try:
            row = read(root, f"{layout.model_runs(model)}/{entry}", ModelRecord)
        except RuntimeFailure as error:
            warnings.append(error.one_line())
            continue
        if row is not None:
            rows.append(row)
    return rows, warnings


def metric_value(row: ModelRecord, metric: str | None) -> float | None:
    if not metric:
        if row.primary_metric.value is not None:
            return row.primary_metric.value
        metric = row.primary_metric.name
    if not metric:
        return None
    return row.metrics.get(metric)


def list_rows(
    root: Root,
    *,
    model: str | None = None,
    tags: dict[str, str] | None = None,
    metric: str | None = None,
    sort: str | None = None,
) -> tuple[list[ModelRecord], list[str]]:
    if sort not in (None, "asc", "desc"):
        raise UsageError("--sort must be one of: asc, desc")
    rows, warnings = [], []
    for name in [segment("model", model)] if model else models(root):
        found, problems = runs(root, name)
        rows.extend(found)
        warnings.extend(problems)
    rows = [
        r
        for r in rows
        if all(r.tags.get(k) == v for k, v in (tags or {}).items())
        and (not metric or metric_value(r, metric) is not None)
    ]

    def key(row: ModelRecord) -> tuple[int, float, str, str]:
        value = metric_value(row, metric)
        if value is None:
            return (1, 0.0, row.model, row.run)
        return (0, -value if sort == "desc" else value, row.model, row.run)

    return sorted(rows, key=key), warnings


def get_row(root: Root, model: str, run: str) -> ModelRecord:
    row = read(root, layout.model_run(segment("model", model), segment("run", run)), ModelRecord)
    if row is None:
        raise RuntimeFailure(
            f"model {model} has no run {run} in {root.label}",
            hint=f"list its runs with `tau data model list --model {model}`, or index new runs "
            "with `tau data model index rebuild`",
            owner=RESEARCHER,
        )
    return row


def show(root: Root, arg: str) -> ModelRecord:
    """`MODEL/RUN`, or a bare `RUN` when exactly one model has that run."""
    if "/" in arg:
        model, _, run = arg.partition("/")
        if not model or not run or "/" in run:
            raise UsageError(f"model reference {arg!r} must be MODEL/RUN or RUN")
        return get_row(root, model, run)
    run = segment("run", arg)
    found = [row for name in models(root) for row in runs(root, name)[0] if row.run == run]
    if not found:
        raise RuntimeFailure(
            f"no model in {root.label} has a run {run}",
            hint="index it with `tau data model index rebuild --run RUN`",
            owner=RESEARCHER,
        )
    if len(found) > 1:
        raise UsageError(
            f"run {run} belongs to several models ({', '.join(sorted(r.model for r in found))}); "
            "name one as MODEL/RUN"
        )
    return found[0]


def best(
    root: Root, model: str, *, metric: str | None = None, direction: str | None = None
) -> ModelRecord:
    """The best run by `metric` (default: each row's primary metric, which must agree)."""
    if direction not in (None, *DIRECTIONS):
        raise UsageError("--direction must be one of: lower, higher")
    rows, _ = runs(root, segment("model", model))
    if not rows:
        raise RuntimeFailure(
            f"model {model} has no runs in {root.label}",
            hint="index finished runs with `tau data model index rebuild`",
            owner=RESEARCHER,
        )
    chosen: tuple[float, ModelRecord] | None = None
    compared: tuple[str, str] | None = None
    for row in sorted(rows, key=lambda r: r.run):
        value = metric_value(row, metric)
        if value is None or math.isnan(value):
            continue
        name = metric or row.primary_metric.name or ""
        way = direction or (None if metric else row.primary_metric.direction)
        way = way or default_direction(name)
        if not metric:
            if compared is None:
                compared = (name, way)
            elif compared != (name, way):
                raise UsageError(
                    f"runs of {model} use different primary metrics ({compared[0]}/{compared[1]} "
                    f"and {name}/{way}); pass --metric and --direction to compare explicitly"
                )
        better = chosen is None or (value < chosen[0] if way == "lower" else value > chosen[0])
        if better:
            chosen = (value, row)
    if chosen is None:
        what = f"metric {metric!r}" if metric else "a primary metric"
        raise RuntimeFailure(f"no run of model {model} has {what}", owner=RESEARCHER)
    return chosen[1]


def set_alias(
    root: Root, model: str, alias: str, run: str, *, clock: Clock = utc_now
) -> ModelAlias:
    row = get_row(root, model, run)
    record = ModelAlias(
        model=model,
        alias=segment("alias", alias),
        run=run,
        record_path=row.record_path,
        updated_at=clock(),
    )
    root.put(layout.model_alias(model, alias), record.to_bytes())
    root.commit()
    return record


def get_alias(root: Root, model: str, alias: str) -> ModelAlias:
    found = read(
        root, layout.model_alias(segment("model", model), segment("alias", alias)), ModelAlias
    )
    if found is None:
        raise RuntimeFailure(
            f"model alias {model}:{alias} is not set in {root.label}",
            hint=f"set it with `tau data model alias set {model} {alias} RUN`",
            owner=RESEARCHER,
        )
    return found


@dataclass(frozen=True)
class ResolvedModel:
    """What `tau serve deploy --from-model` needs: the run and its checkpoint on the PVC."""

    model: str
    run: str
    alias: str | None
    checkpoint_path: str  # absolute in-pod path under /data
    record: ModelRecord


def resolve_model_ref(root: Root, ref: str | ModelRef) -> ResolvedModel:
    """`MODEL@RUN`, `MODEL:ALIAS` or a bare `MODEL` (alias `default`) to a run's checkpoint.

    The checkpoint is the run's ready `checkpoint` artifact when its index names one, else
    the run's directory.
    """
    parsed = parse_model(ref) if isinstance(ref, str) else ref
    run = parsed.run or get_alias(root, parsed.model, parsed.alias or "").run
    row = get_row(root, parsed.model, run)
    return ResolvedModel(parsed.model, run, parsed.alias, checkpoint_path(row), row)


def checkpoint_path(row: ModelRecord) -> str:
    for artifact in row.artifacts:
        if artifact.get("name") == "checkpoint" and artifact.get("durable_path"):
            if artifact.get("status", "ready") != "ready":
                raise RuntimeFailure(
                    f"the checkpoint of {row.model}@{row.run} is not ready "
                    f"(status {artifact.get('status')!r})",
                    owner=RESEARCHER,
                )
            return str(artifact["durable_path"])
    if row.record_path:
        return posixpath.dirname(row.record_path)
    return layout.in_pod(f"{layout.RUN_ROOTS[0]}/{row.run}")


def rebuild(
    root: Root,
    *,
    model: str | None = None,
    run: str | None = None,
    namespace: str | None = None,
    clock: Clock = utc_now,
) -> tuple[list[ModelRecord], list[str]]:
    """Index finished runs: one registry row per run directory that left a record or metrics."""
    if model:
        segment("model", model)
    if run:
        segment("run", run)
    indexed, warnings = [], []
    for runs_root in layout.RUN_ROOTS:
        for name in root.listdir(runs_root):
            if run and name != run:
                continue
            if not SEGMENT.match(name):
                warnings.append(
                    f"skipping {layout.in_pod(runs_root)}/{name}: not a registry run name"
                )
                continue
            try:
                row = _row_for(root, f"{runs_root}/{name}", name, model, namespace, clock)
            except RuntimeFailure as error:
                warnings.append(f"skipping {name}: {error.one_line()}")
                continue
            if row is None:
                continue
            root.put(layout.model_run(row.model, row.run), row.to_bytes())
            indexed.append(row)
    root.commit()
    if run and not indexed and not warnings:
        raise RuntimeFailure(
            f"run {run} left nothing to index (no {layout.MODEL_RECORD}, {layout.METRICS} or "
            f"{layout.ARTIFACTS} under {', '.join(layout.in_pod(r) for r in layout.RUN_ROOTS)})",
            owner=RESEARCHER,
        )
    return indexed, warnings


def _row_for(
    root: Root, run_dir: str, run: str, model: str | None, namespace: str | None, clock: Clock
) -> ModelRecord | None:
    own = read(root, f"{run_dir}/{layout.MODEL_RECORD}", ModelRecord)
    metrics_raw = root.read(f"{run_dir}/{layout.METRICS}")
    artifacts_raw = root.read(f"{run_dir}/{layout.ARTIFACTS}")
    if own is None and metrics_raw is None and artifacts_raw is None:
        return None
    index = _json(root, f"{run_dir}/{layout.ARTIFACTS}", artifacts_raw) if artifacts_raw else {}
    metrics = dict(own.metrics) if own else {}
    if metrics_raw is not None:
        metrics.update(_numbers(_json(root, f"{run_dir}/{layout.METRICS}", metrics_raw)))
    name = model or (own.model if own and own.model else DEFAULT_MODEL)
    segment("model", name)
    now = clock()
    row = ModelRecord(
        **{
            **(own.model_dump(exclude_none=True) if own else {}),
            "schema_version": 1,
            "kind": MODEL_KIND,
            "model": name,
            "run": run,
            "namespace": (own.namespace if own else None) or index.get("namespace") or namespace,
            "resource_name": (own.resource_name if own else None) or index.get("resource_name"),
            "created_at": (own.created_at if own else None) or index.get("created_at") or now,
            "completed_at": (own.completed_at if own else None) or now,
            "record_path": layout.in_pod(f"{run_dir}/{layout.MODEL_RECORD}"),
            "registry_path": layout.in_pod(layout.model_run(name, run)),
            "artifacts_index": layout.in_pod(f"{run_dir}/{layout.ARTIFACTS}") if index else None,
            "metrics_path": layout.in_pod(f"{run_dir}/{layout.METRICS}") if metrics_raw else None,
            "metrics": metrics,
            "artifacts": (own.artifacts if own and own.artifacts else None)
            or list(index.get("artifacts") or []),
        }
    )
    row.primary_metric = _primary(own.primary_metric if own else PrimaryMetric(), metrics)
    return row


def _primary(declared: PrimaryMetric, metrics: dict[str, float]) -> PrimaryMetric:
    name = declared.name or next((c for c in PRIMARY_CANDIDATES if c in metrics), None)
    if name is None:
        return PrimaryMetric()
    value = metrics.get(name, declared.value)
    return PrimaryMetric(
        name=name, value=value, direction=declared.direction or default_direction(name)
    )


def _json(root: Root, path: str, raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise RuntimeFailure(
            f"{layout.in_pod(path)} on {root.label} is not valid JSON", owner=RESEARCHER
        ) from None


def _numbers(data: Any, prefix: str = "") -> dict[str, float]:
    """Numeric leaves of a metrics document, nested keys joined with dots (`eval.loss`)."""
    out: dict[str, float] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            out.update(_numbers(value, f"{prefix}.{key}" if prefix else str(key)))
    elif (
        isinstance(data, int | float)
        and not isinstance(data, bool)
        and prefix
        and math.isfinite(data)
    ):
        out[prefix] = float(data)
    return out

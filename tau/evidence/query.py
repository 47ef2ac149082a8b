"""Read side of the store: listing, search, status, lifecycle, read-only SQL, series.

Reads never take the write lock (SQLite WAL lets them run beside a writer); only the
summary backfill does, and it steps aside when the store is busy.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tau.errors import UsageError, ValidationError
from tau.evidence.errors import StoreCorrupt
from tau.evidence.store import RESTORE_HINT, Store

RUN_SEARCH_SCHEMA = "tau.exp.run_search.v0"
EXPERIMENT_SEARCH_SCHEMA = "tau.exp.experiment_search.v0"
DEFAULT_LIMIT = 200
MAX_LIMIT = 1000
LIFECYCLES = ("pending", "running", "failed", "succeeded", "incomplete")
MIN_STEP_TAGS = ("tau.success.min_step", "success.min_step", "expected_max_step", "max_step")
FAILURE_TOKENS = (
    "collapse_bad_steps",
    "bad_steps",
    "nan_steps",
    "inf_steps",
    "oom",
    "failed",
    "failure",
    "error_count",
    "errors",
)
SUMMARY_FIELDS = {
    "latest": "latest_value",
    "latest_value": "latest_value",
    "min": "min_value",
    "min_value": "min_value",
    "max": "max_value",
    "max_value": "max_value",
    "count": "count",
    "finite_count": "finite_count",
    "non_finite_count": "non_finite_count",
    "latest_step": "latest_step",
    "min_step": "min_step",
    "max_step": "max_step",
}
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    "!=": lambda a, b: a != b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    "=": lambda a, b: a == b,
}
_FILTER = re.compile(
    r"^\s*(?P<name>[^@:<>=!]+?)\s*(?:[@:](?P<field>\w+))?\s*(?P<op>>=|<=|!=|>|<|=)\s*(?P<value>\S+)\s*$"
)


@contextlib.contextmanager
def reader(store: Store) -> Iterator[sqlite3.Connection]:
    """A read-only connection; a catalogue that fails mid-read is one StoreCorrupt line."""
    try:
        with contextlib.closing(store.connect(readonly=True)) as db:
            yield db
    except (sqlite3.DatabaseError, UnicodeDecodeError) as error:  # garbled text pages too
        if isinstance(error, sqlite3.OperationalError) and "locked" in str(error):
            raise
        raise StoreCorrupt(
            f"{store.index_path} cannot be read ({error})",
            hint=RESTORE_HINT,
            owner="the store's owner",
        ) from None


# -- metric filters ----------------------------------------------------------------------


@dataclass(frozen=True)
class MetricFilter:
    metric: str
    field: str
    op: str
    value: float
    text: str

    def holds(self, summaries: dict[str, dict[str, Any]]) -> bool:
        summary = summaries.get(self.metric)
        if summary is None or summary.get(self.field) is None:
            return False
        return _OPS[self.op](float(summary[self.field]), self.value)


def parse_metric_filter(text: str) -> MetricFilter:
    match = _FILTER.match(text)
    field_name = (match.group("field") or "latest") if match else ""
    if not match or field_name not in SUMMARY_FIELDS:
        raise UsageError(
            f"--metric-filter {text!r} is invalid: use NAME[@FIELD] OP NUMBER, OP one of "
            f">=, <=, !=, >, <, =; FIELD one of {', '.join(sorted(SUMMARY_FIELDS))}",
            owner="the user",
        )
    try:
        value = float(match.group("value"))
    except ValueError:
        raise UsageError(
            f"--metric-filter {text!r}: {match.group('value')!r} is not a number"
        ) from None
    return MetricFilter(
        match.group("name").strip(), SUMMARY_FIELDS[field_name], match.group("op"), value, text
    )


def parse_since(text: str, *, now: datetime | None = None) -> str:
    """RFC3339, a Go-style duration (`36h`, `90m`) or `<N>d` days; returns an RFC3339 bound."""
    now = now or datetime.now(UTC)
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(d|h|m|s)", text.strip())
    if match:
        unit = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}[match.group(2)]
        bound = now - timedelta(**{unit: float(match.group(1))})
    else:
        try:
            bound = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(
                f"--since {text!r} is not RFC3339, a duration like 36h, or Nd", owner="the user"
            ) from None
        bound = bound if bound.tzinfo else bound.replace(tzinfo=UTC)
    return bound.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- lifecycle ---------------------------------------------------------------------------


def lifecycle(
    run: dict[str, Any],
    summaries: dict[str, dict[str, Any]],
    tags: dict[str, str],
    filters: list[MetricFilter] = (),  # type: ignore[assignment]
    min_step: int | None = None,
) -> str:
    state = (run.get("state") or "").lower()
    if state in ("pending", "running"):
        return state
    if state == "failed":
        return "failed"
    if state in ("succeeded", "completed"):
        gates_ok = _gates_hold(summaries, tags, filters, min_step)
        return "succeeded" if gates_ok else "incomplete"
    return "pending" if not run.get("completed_at") else "incomplete"


def _gates_hold(
    summaries: dict[str, dict[str, Any]],
    tags: dict[str, str],
    filters: list[MetricFilter],
    min_step: int | None,
) -> bool:
    required = min_step
    if required is None:
        for key in MIN_STEP_TAGS:
            if tags.get(key, "").strip().lstrip("-").isdigit():
                required = int(tags[key])
                break
    if required is not None:
        steps = [s["max_step"] for s in summaries.values() if s.get("max_step") is not None]
        if not steps or max(steps) < required:
            return False
    for name, summary in summaries.items():
        if summary.get("non_finite_count"):
            return False
        lowered = name.lower()
        if (
            any(token in lowered for token in FAILURE_TOKENS)
            and (summary.get("max_value") or 0) > 0
        ):
            return False
    return all(f.holds(summaries) for f in filters)


# -- runs --------------------------------------------------------------------------------


@dataclass
class RunQuery:
    query: str = ""
    target: str = ""
    project: str = ""
    group: str = ""
    experiment: str = ""
    state: str = ""
    lifecycle: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    metric_name: str = ""
    metric_filters: list[MetricFilter] = field(default_factory=list)
    since: str = ""
    min_step: int | None = None
    limit: int = DEFAULT_LIMIT


def summaries_by_run(db: sqlite3.Connection) -> dict[str, dict[str, dict[str, Any]]]:
    result: dict[str, dict[str, dict[str, Any]]] = {}
    for row in db.execute("SELECT * FROM metric_summaries"):
        result.setdefault(row["run_id"], {})[row["metric_name"]] = dict(row)
    return result


def tags_by_run(db: sqlite3.Connection) -> dict[str, dict[str, str]]:
    result: dict[str, dict[str, str]] = {}
    for row in db.execute("SELECT scope_id, key, value FROM tags WHERE scope_type='run'"):
        result.setdefault(row["scope_id"], {})[row["key"]] = row["value"]
    return result


def search_runs(store: Store, q: RunQuery) -> dict[str, Any]:
    if q.lifecycle and q.lifecycle not in LIFECYCLES:
        raise UsageError(
            f"--lifecycle {q.lifecycle!r} must be one of {', '.join(LIFECYCLES)}", owner="the user"
        )
    limit = max(1, min(q.limit or DEFAULT_LIMIT, MAX_LIMIT))
    with reader(store) as db:
        where, args = ["1=1"], []
        for column, value in (
            ("project", q.project),
            ("run_group_id", q.group),
            ("experiment_id", q.experiment),
            ("state", q.state),
        ):
            if value:
                where.append(f"{column}=?")
                args.append(value)
        if q.target:
            where.append("(run_id=? OR run_group_id=? OR experiment_id=?)")
            args += [q.target] * 3
        if q.since:
            where.append("created_at>=?")
            args.append(parse_since(q.since))
        rows = [
            dict(r)
            for r in db.execute(
                f"SELECT * FROM runs WHERE {' AND '.join(where)} ORDER BY created_at DESC, run_id",
                args,
            )
        ]
        summaries = summaries_by_run(db)
        tags = tags_by_run(db)
    results = []
    needle = q.query.lower()
    for run in rows:
        run_summaries = summaries.get(run["run_id"], {})
        run_tags = tags.get(run["run_id"], {})
        if any(run_tags.get(k) != v for k, v in q.tags.items()):
            continue
        if q.metric_name and q.metric_name not in run_summaries:
            continue
        if needle and not _matches(needle, run, run_summaries, run_tags):
            continue
        if not all(f.holds(run_summaries) for f in q.metric_filters):
            continue
        max_steps = [s["max_step"] for s in run_summaries.values() if s["max_step"] is not None]
        if q.min_step is not None and (not max_steps or max(max_steps) < q.min_step):
            continue
        life = lifecycle(run, run_summaries, run_tags, q.metric_filters)
        if q.lifecycle and life != q.lifecycle:
            continue
        results.append(
            {
                **run,
                "lifecycle": life,
                "max_step": max(max_steps) if max_steps else None,
                "metrics": {
                    name: {
                        "latest": s["latest_value"],
                        "latest_step": s["latest_step"],
                        "min": s["min_value"],
                        "max": s["max_value"],
                        "count": s["count"],
                        "non_finite_count": s["non_finite_count"],
                    }
                    for name, s in sorted(run_summaries.items())
                },
                "tags": run_tags,
            }
        )
        if len(results) >= limit:
            break
    return {
        "schema": RUN_SEARCH_SCHEMA,
        "store_path": str(store.root),
        "count": len(results),
        "runs": results,
    }


def _matches(
    needle: str, run: dict[str, Any], summaries: dict[str, Any], tags: dict[str, str]
) -> bool:
    haystack = [
        run["run_id"],
        run["run_group_id"],
        run["experiment_id"],
        run["project"],
        run["owner"],
    ]
    haystack += list(summaries) + list(tags.values())
    return any(needle in (text or "").lower() for text in haystack)


def list_records(
    store: Store,
    kind: str,
    *,
    project: str = "",
    group: str = "",
    state: str = "",
    tags: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    if kind == "runs":
        runs: list[dict[str, Any]] = search_runs(
            store,
            RunQuery(project=project, group=group, state=state, tags=tags or {}, limit=MAX_LIMIT),
        )["runs"]
        return runs
    table = {"groups": "run_groups", "experiments": "experiments"}.get(kind)
    if table is None:
        raise UsageError(f"--kind {kind!r} must be runs, groups or experiments", owner="the user")
    with reader(store) as db:
        where, args = "1=1", []
        if project:
            where, args = "project=?", [project]
        rows = [
            dict(r) for r in db.execute(f"SELECT * FROM {table} WHERE {where} ORDER BY 1", args)
        ]
        counts = _run_counts(db, "run_group_id" if kind == "groups" else "experiment_id")
    key = "run_group_id" if kind == "groups" else "experiment_id"
    for row in rows:
        row["runs"] = counts.get(row[key], 0)
    return rows


def _run_counts(db: sqlite3.Connection, column: str) -> dict[str, int]:
    return {
        r[0]: r[1] for r in db.execute(f"SELECT {column}, COUNT(*) FROM runs GROUP BY {column}")
    }


# -- experiments -------------------------------------------------------------------------


def experiment_index(store: Store, query: str = "", project: str = "") -> dict[str, Any]:
    """Explicit experiments plus implicit ones (a run group whose runs have no experiment)."""
    with reader(store) as db:
        explicit = {r["experiment_id"]: dict(r) for r in db.execute("SELECT * FROM experiments")}
        runs = [
            dict(r)
            for r in db.execute(
                "SELECT run_id, experiment_id, run_group_id, project, state, created_at FROM runs"
            )
        ]
    experiments: dict[str, dict[str, Any]] = {}
    for exp_id, row in explicit.items():
        experiments[exp_id] = {**row, "runs": [], "run_groups": set()}
    for run in runs:
        exp_id = run["experiment_id"] or run["run_group_id"]
        entry = experiments.setdefault(
            exp_id,
            {
                "experiment_id": exp_id,
                "project": run["project"],
                "name": exp_id,
                "description": "",
                "source": "run_group",
                "created_at": run["created_at"],
                "updated_at": run["created_at"],
                "runs": [],
                "run_groups": set(),
            },
        )
        entry["runs"].append(run["run_id"])
        entry["run_groups"].add(run["run_group_id"])
    needle = query.lower()
    result = []
    for entry in sorted(experiments.values(), key=lambda e: e["experiment_id"]):
        if project and entry["project"] != project:
            continue
        text = " ".join(
            [entry["experiment_id"], entry["name"], entry["description"], *entry["runs"]]
        )
        if needle and needle not in text.lower():
            continue
        entry["run_groups"] = sorted(entry["run_groups"])
        entry["run_count"] = len(entry["runs"])
        result.append(entry)
    return {
        "schema": EXPERIMENT_SEARCH_SCHEMA,
        "store_path": str(store.root),
        "count": len(result),
        "experiments": result,
    }


# -- status ------------------------------------------------------------------------------


def resolve_target(db: sqlite3.Connection, name: str) -> tuple[str, list[str]]:
    """NAME as run group first, then run, then experiment (id, then name): (type, run ids)."""

    def ids(sql: str, *args: Any) -> list[str]:
        return [r[0] for r in db.execute(sql, args)]

    if db.execute("SELECT 1 FROM run_groups WHERE run_group_id=?", (name,)).fetchone():
        return "run_group", ids(
            "SELECT run_id FROM runs WHERE run_group_id=? ORDER BY run_id", name
        )
    if db.execute("SELECT 1 FROM runs WHERE run_id=?", (name,)).fetchone():
        return "run", [name]
    row = db.execute(
        "SELECT experiment_id FROM experiments WHERE experiment_id=? OR name=? "
        "ORDER BY experiment_id=? DESC LIMIT 1",
        (name, name, name),
    ).fetchone()
    if row:
        return "experiment", ids(
            "SELECT run_id FROM runs WHERE experiment_id=? ORDER BY run_id", row[0]
        )
    raise ValidationError(
        f"{name!r} is not a run group, run or experiment in this store",
        hint="list what exists with 'taugrid-portal experiment list --kind runs'",
        owner="the user",
    )


def status(store: Store, name: str) -> dict[str, Any]:
    with reader(store) as db:
        target_type, run_ids = resolve_target(db, name)
        marks = ",".join("?" for _ in run_ids) or "''"
        runs = [
            dict(r) for r in db.execute(f"SELECT * FROM runs WHERE run_id IN ({marks})", run_ids)
        ]
        summaries = summaries_by_run(db)
        tags = tags_by_run(db)

        def count(table: str) -> int:
            total: int = db.execute(
                f"SELECT COUNT(*) FROM {table} WHERE run_id IN ({marks})", run_ids
            ).fetchone()[0]
            return total

        obs = db.execute(
            f"SELECT COUNT(*) FROM observations WHERE (scope_type='run' AND scope_id IN ({marks})) "
            "OR (scope_type=? AND scope_id=?)",
            [*run_ids, target_type, name],
        ).fetchone()[0]
        latest_event = db.execute(
            f"SELECT MAX(time) FROM events WHERE run_id IN ({marks})", run_ids
        ).fetchone()[0]
        result: dict[str, Any] = {
            "store_path": str(store.root),
            "target": name,
            "target_type": target_type,
            target_type: name,
            "runs": len(runs),
            "run_groups": len({r["run_group_id"] for r in runs}),
            "state_counts": dict(Counter(r["state"] for r in runs)),
            "lifecycle_counts": dict(
                Counter(
                    lifecycle(r, summaries.get(r["run_id"], {}), tags.get(r["run_id"], {}))
                    for r in runs
                )
            ),
            "configs": count("configs"),
            "metric_files": count("metric_files"),
            "artifacts": count("artifacts"),
            "observations": obs,
            "latest_event_at": latest_event,
        }
    return result


# -- read-only SQL -----------------------------------------------------------------------

_READ_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}


def _authorizer(action: int, *_args: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def run_sql(store: Store, query: str, *, limit: int = 10000) -> dict[str, Any]:
    """Run one SELECT/WITH statement on a read-only connection with a deny-by-default authorizer."""
    text = query.strip().rstrip(";").strip()
    first = text.split(None, 1)[0].upper() if text else ""
    if (
        first not in ("SELECT", "WITH")
        or not sqlite3.complete_statement(text + ";")
        or ";" in _strip_strings(text)
    ):
        raise UsageError(
            "experiment sql accepts exactly one read-only statement starting with SELECT or WITH",
            hint="the store is changed only through init, track and import",
            owner="the user",
        )
    with reader(store) as db:
        db.set_authorizer(_authorizer)
        try:
            cursor = db.execute(text)
            columns = [d[0] for d in cursor.description or []]
            rows = [list(r) for r in cursor.fetchmany(limit)]
        except sqlite3.DatabaseError as error:
            raise UsageError(f"experiment sql: {error}", owner="the user") from None
    return {"columns": columns, "rows": rows, "row_count": len(rows)}


def _strip_strings(text: str) -> str:
    return re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", "''", text)


def _marks(run_ids: list[str]) -> str:
    return ",".join("?" for _ in run_ids) or "''"


def runs_by_id(db: sqlite3.Connection, run_ids: list[str]) -> list[dict[str, Any]]:
    """The `runs` rows of `run_ids`, oldest first."""
    rows = db.execute(
        f"SELECT * FROM runs WHERE run_id IN ({_marks(run_ids)}) ORDER BY created_at, run_id",
        run_ids,
    )
    return [dict(row) for row in rows]


def summary_rows(db: sqlite3.Connection, run_ids: list[str]) -> list[sqlite3.Row]:
    """Every metric summary of `run_ids`."""
    return db.execute(
        f"SELECT * FROM metric_summaries WHERE run_id IN ({_marks(run_ids)})", run_ids
    ).fetchall()


def latest_by_group(db: sqlite3.Connection, run_ids: list[str]) -> list[sqlite3.Row]:
    """Each run's latest value per metric, with the run group it belongs to (for compare)."""
    return db.execute(
        "SELECT s.run_id, s.metric_name, s.latest_value, s.latest_step, r.run_group_id "
        "FROM metric_summaries s JOIN runs r ON r.run_id = s.run_id "
        f"WHERE s.run_id IN ({_marks(run_ids)})",
        run_ids,
    ).fetchall()


def configs_by_run(db: sqlite3.Connection, run_ids: list[str]) -> dict[str, list[Any]]:
    """Each run's normalized configs, decoded."""
    configs: dict[str, list[Any]] = {}
    for row in db.execute(
        f"SELECT run_id, normalized_json FROM configs WHERE run_id IN ({_marks(run_ids)})",
        run_ids,
    ):
        configs.setdefault(row["run_id"], []).append(json.loads(row["normalized_json"]))
    return configs


def artifact(store: Store, artifact_id: str) -> dict[str, Any] | None:
    with reader(store) as db:
        row = db.execute("SELECT * FROM artifacts WHERE artifact_id=?", (artifact_id,)).fetchone()
    return dict(row) if row is not None else None


def newest_output_artifact(store: Store, ref: str) -> dict[str, Any] | None:
    """The newest output artifact whose alias, id or name is `ref` (tau.stellar.use_artifact)."""
    with reader(store) as db:
        row = db.execute(
            "SELECT artifact_id, run_id, name, uri FROM artifacts "
            "WHERE direction='output' AND (COALESCE(alias, '')=? OR artifact_id=? OR name=?) "
            "ORDER BY created_at DESC, artifact_id DESC LIMIT 1",
            (ref, ref, ref),
        ).fetchone()
    return dict(row) if row is not None else None


def artifacts_for(store: Store, target: str) -> list[dict[str, Any]]:
    with reader(store) as db:
        _, run_ids = resolve_target(db, target)
        marks = ",".join("?" for _ in run_ids) or "''"
        rows = db.execute(
            f"SELECT * FROM artifacts WHERE run_id IN ({marks}) ORDER BY run_id, created_at",
            run_ids,
        ).fetchall()
    return [dict(row) for row in rows]


def metric_names(store: Store, target: str) -> list[str]:
    """Metric names any run of `target` logged."""
    with reader(store) as db:
        _, run_ids = resolve_target(db, target)
        marks = ",".join("?" for _ in run_ids) or "''"
        rows = db.execute(
            f"SELECT DISTINCT metric_name FROM metric_summaries WHERE run_id IN ({marks}) "
            "ORDER BY metric_name",
            run_ids,
        ).fetchall()
    return [row[0] for row in rows]

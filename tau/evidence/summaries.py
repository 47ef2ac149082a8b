"""Per-(run, metric) summaries, folded in one metric file at a time.

A summary answers "did it improve, where did it end" without reading Parquet: counts,
step range, min/max and the latest finite point. NaN and infinities only raise
`non_finite_count`. Each file is folded exactly once (`metric_summary_files`), so a retried
write or a second backfill never double-counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tau.evidence.store import Transaction, now

if TYPE_CHECKING:
    import pyarrow as pa

_MIN_INT64 = -(2**63)


@dataclass
class Summary:
    project: str
    run_group_id: str
    count: int
    finite_count: int
    non_finite_count: int
    min_step: int | None
    max_step: int | None
    latest_step: int | None
    latest_wall_time: str | None
    latest_value: float | None
    min_value: float | None
    max_value: float | None


def format_wall_time(micros: int | None) -> str | None:
    if micros is None:
        return None
    stamp = datetime.fromtimestamp(micros / 1e6, UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ordinals(n: int, start: int = 0) -> pa.Array[Any]:
    """start, start + 1, ... as int64, built by Arrow (a Python range costs ~0.2 µs a row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if n == 0:
        return pa.array([], pa.int64())
    counted = pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n))
    return pc.add(counted, start - 1) if start != 1 else counted


def summarize(table: pa.Table) -> dict[str, Summary]:
    """Summaries of one point table, keyed by trimmed metric name (empty names skipped)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return {}
    names = pc.utf8_trim_whitespace(table["metric_name"])
    step = table["step"]
    base = pa.table(
        {
            "metric_name": names,
            "step": step,
            "has_step": pc.is_valid(step),
            "wall_time": table["wall_time"].cast(pa.int64()),
            "value": table["value"],
            "finite": pc.is_finite(table["value"]),
            "ordinal": ordinals(table.num_rows),
        }
    ).filter(pc.not_equal(names, ""))  # type: ignore[call-overload]  # pyarrow-stubs, as below
    totals = base.group_by("metric_name", use_threads=False).aggregate(
        [
            ("value", "count"),
            ("finite", "sum"),
            ("step", "min"),
            ("step", "max"),
            ("ordinal", "min"),
        ]
    )
    first = totals["ordinal_min"]
    totals = totals.append_column("project", table["project"].take(first)).append_column(
        "run_group_id", table["run_group_id"].take(first)
    )
    finite = base.filter(base["finite"])
    keep_nulls = pc.ScalarAggregateOptions(skip_nulls=False)
    # Nulls lose: a step-less row sorts before any stepped one, a time-less before any timed.
    # Grouping keeps input order within a group, so sorting by the keys alone (not the name)
    # makes each group's last row its latest.
    # pyarrow-stubs type compute operands as Arrow scalars and table columns as arrays;
    # pyarrow takes Python values and chunked columns.
    keys = pa.table(
        {
            "has_step": finite["has_step"],  # type: ignore[dict-item]
            "step_key": pc.fill_null(finite["step"], _MIN_INT64),  # type: ignore[dict-item, type-var]
            "time_key": pc.fill_null(finite["wall_time"], _MIN_INT64),  # type: ignore[dict-item, type-var]
            "ordinal": finite["ordinal"],  # type: ignore[dict-item]
        }
    )
    order = pc.sort_indices(keys, sort_keys=[(name, "ascending") for name in keys.column_names])
    ordered = finite.select(["metric_name", "value", "step", "wall_time"]).take(order)
    latest = ordered.group_by("metric_name", use_threads=False).aggregate(
        [
            ("value", "min"),
            ("value", "max"),
            ("value", "last", keep_nulls),
            ("step", "last", keep_nulls),
            ("wall_time", "last", keep_nulls),
        ]
    )
    finite_rows = {row["metric_name"]: row for row in latest.to_pylist()}
    result: dict[str, Summary] = {}
    for row in totals.to_pylist():
        name = row["metric_name"]
        fin = finite_rows.get(name)
        finite_count = int(row["finite_sum"] or 0)
        result[name] = Summary(
            project=row["project"],
            run_group_id=row["run_group_id"],
            count=int(row["value_count"]),
            finite_count=finite_count,
            non_finite_count=int(row["value_count"]) - finite_count,
            min_step=row["step_min"],
            max_step=row["step_max"],
            latest_step=fin["step_last"] if fin else None,
            latest_wall_time=format_wall_time(fin["wall_time_last"]) if fin else None,
            latest_value=fin["value_last"] if fin else None,
            min_value=fin["value_min"] if fin else None,
            max_value=fin["value_max"] if fin else None,
        )
    return result


def _latest_key(step: int | None, wall_time: str | None, file_id: str | None) -> tuple[Any, ...]:
    return (step is not None, step or 0, wall_time or "", file_id or "")


def _pick(a: Any, b: Any, fn: Any) -> Any:
    values = [v for v in (a, b) if v is not None]
    return fn(values) if values else None


def fold(txn: Transaction, found: dict[str, Summary], *, file_id: str, run_id: str) -> bool:
    """Merge one file's summaries into the catalogue; False when the file was already folded."""
    db = txn.db
    if db.execute("SELECT 1 FROM metric_summary_files WHERE file_id=?", (file_id,)).fetchone():
        return False
    stamp = now()
    for name, new in found.items():
        old = db.execute(
            "SELECT * FROM metric_summaries WHERE run_id=? AND metric_name=?", (run_id, name)
        ).fetchone()
        merged = dict(vars(new))
        merged["latest_file_id"] = file_id if new.finite_count else None
        if old is not None:
            merged["count"] += old["count"]
            merged["finite_count"] += old["finite_count"]
            merged["non_finite_count"] += old["non_finite_count"]
            merged["min_step"] = _pick(old["min_step"], new.min_step, min)
            merged["max_step"] = _pick(old["max_step"], new.max_step, max)
            merged["min_value"] = _pick(old["min_value"], new.min_value, min)
            merged["max_value"] = _pick(old["max_value"], new.max_value, max)
            old_has = old["latest_value"] is not None
            new_key = _latest_key(new.latest_step, new.latest_wall_time, file_id)
            old_key = _latest_key(
                old["latest_step"], old["latest_wall_time"], old["latest_file_id"]
            )
            if old_has and (not new.finite_count or old_key > new_key):
                for col in ("latest_step", "latest_wall_time", "latest_value", "latest_file_id"):
                    merged[col] = old[col]
        merged.update(run_id=run_id, metric_name=name, updated_at=stamp)
        cols = list(merged)
        db.execute(
            f"INSERT OR REPLACE INTO metric_summaries ({', '.join(cols)}) "
            f"VALUES ({', '.join('?' for _ in cols)})",
            [merged[c] for c in cols],
        )
    db.execute(
        "INSERT INTO metric_summary_files(file_id, run_id, summarized_at) VALUES (?, ?, ?)",
        (file_id, run_id, stamp),
    )
    return True

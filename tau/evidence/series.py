"""Reading metric points back out of the Parquet files the catalogue indexes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, cast

from tau.evidence.query import reader
from tau.evidence.store import Store


@dataclass
class Series:
    run_id: str
    metric: str
    steps: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    non_finite: int = 0
    points: int = 0  # finite points stored, before any envelope reduction


def read_series(
    store: Store,
    run_ids: list[str],
    metrics: list[str] | None = None,
    *,
    envelope: int | None = None,
) -> dict[tuple[str, str], Series]:
    """Finite points per (run, metric), ordered by step (row order when steps are missing).

    Non-finite values are counted, not returned: charts cannot draw them and JSON cannot
    carry them; the Parquet files keep them untouched. With `envelope`, a long series is
    reduced in Arrow to the first, last, minimum and maximum point of `envelope` equal
    buckets, so a display downsampler never walks millions of points in Python.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from tau.evidence.points import read_stored

    if not run_ids:
        return {}
    marks = ",".join("?" for _ in run_ids)
    with reader(store) as db:
        files = db.execute(
            f"SELECT run_id, path FROM metric_files WHERE format='parquet' AND run_id IN ({marks}) "
            "ORDER BY created_at, file_id",
            run_ids,
        ).fetchall()
    result: dict[tuple[str, str], Series] = {}
    merged: set[tuple[str, str]] = set()
    for row in files:
        filters = [("metric_name", "in", metrics)] if metrics else None
        table = read_stored(
            store.root, row["path"], columns=["metric_name", "step", "value"], filters=filters
        )
        if table.num_rows == 0:
            continue
        step = table["step"].cast(pa.float64())
        if step.null_count:
            step = pc.coalesce(step, _ordinal(table.num_rows).cast(pa.float64()))
        table = pa.table(
            {"metric_name": table["metric_name"], "step": step, "value": table["value"]}
        )
        # Non-null columns the store wrote (to_pylist is typed as optional values).
        names = cast(list[str], table["metric_name"].unique().to_pylist())
        for name in names:
            part = table
            if len(names) > 1:
                # pyarrow-stubs type compute operands as Arrow scalars; pyarrow takes Python values.
                part = table.filter(pc.equal(table["metric_name"], name))  # type: ignore[call-overload]
            if not _ascending(part["step"]):
                part = part.sort_by([("step", "ascending")])
            finite = pc.is_finite(part["value"])
            key = (row["run_id"], name)
            if key in result:
                merged.add(key)
            series = result.setdefault(key, Series(row["run_id"], name))
            kept = part.filter(finite)
            series.non_finite += part.num_rows - kept.num_rows
            series.points += kept.num_rows
            if envelope and kept.num_rows > 4 * envelope:
                kept = _envelope(kept, envelope)
            series.steps.extend(cast(list[float], kept["step"].to_pylist()))
            series.values.extend(cast(list[float], kept["value"].to_pylist()))
    for key in merged:
        series = result[key]
        pairs = sorted(zip(series.steps, series.values, strict=True))
        series.steps = [p[0] for p in pairs]
        series.values = [p[1] for p in pairs]
    return result


def _ordinal(n: int) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), n)), 1)


def _ascending(column: Any) -> bool:
    import pyarrow.compute as pc

    n = len(column)
    return n < 2 or pc.all(pc.greater_equal(column.slice(1), column.slice(0, n - 1))).as_py()


def _envelope(table: Any, buckets: int) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    ordinal = _ordinal(n)
    bucket = pc.divide(pc.multiply(ordinal, buckets), n)
    ranked = pa.table({"bucket": bucket, "value": table["value"], "ordinal": ordinal}).sort_by(
        [("bucket", "ascending"), ("value", "ascending"), ("ordinal", "ascending")]
    )
    extremes = ranked.group_by("bucket", use_threads=False).aggregate(
        [("ordinal", "first"), ("ordinal", "last"), ("ordinal", "min"), ("ordinal", "max")]
    )
    keep = pa.concat_arrays(
        [
            extremes[c].combine_chunks()
            for c in ("ordinal_first", "ordinal_last", "ordinal_min", "ordinal_max")
        ]
    )
    return table.take(pc.unique(keep).sort())


def finite_or_none(value: Any) -> Any:
    return value if not isinstance(value, float) or math.isfinite(value) else None

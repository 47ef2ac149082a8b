"""Reading metric points back out of the Parquet files the catalogue indexes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from tau.evidence.query import reader
from tau.evidence.store import Store


@dataclass
class Series:
    run_id: str
    metric: str
    steps: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    non_finite: int = 0


def read_series(
    store: Store, run_ids: list[str], metrics: list[str] | None = None
) -> dict[tuple[str, str], Series]:
    """Finite points per (run, metric), ordered by step (row order when steps are missing).

    Non-finite values are counted, not returned: charts cannot draw them and JSON cannot
    carry them; the Parquet files keep them untouched.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

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
    for row in files:
        filters = [("metric_name", "in", metrics)] if metrics else None
        table = pq.read_table(
            store.root / row["path"],
            columns=["metric_name", "step", "value"],
            filters=filters,
        )
        if table.num_rows == 0:
            continue
        ordinal = pa.array(range(table.num_rows), pa.int64())
        step = pc.coalesce(table["step"].cast(pa.float64()), ordinal.cast(pa.float64()))
        table = pa.table(
            {"metric_name": table["metric_name"], "step": step, "value": table["value"]}
        ).sort_by([("metric_name", "ascending"), ("step", "ascending")])
        for name in table["metric_name"].unique().to_pylist():
            part = table.filter(pc.equal(table["metric_name"], name))
            finite = pc.is_finite(part["value"])
            series = result.setdefault((row["run_id"], name), Series(row["run_id"], name))
            series.non_finite += part.num_rows - pc.sum(finite).as_py()
            kept = part.filter(finite)
            series.steps.extend(kept["step"].to_pylist())
            series.values.extend(kept["value"].to_pylist())
    for series in result.values():
        if any(a > b for a, b in zip(series.steps, series.steps[1:], strict=False)):
            pairs = sorted(zip(series.steps, series.values, strict=True))
            series.steps = [p[0] for p in pairs]
            series.values = [p[1] for p in pairs]
    return result


def finite_or_none(value: Any) -> Any:
    return value if not isinstance(value, float) or math.isfinite(value) else None

"""The normalized metric point schema (`tau.metrics.scalar.v2`) and its Parquet files.

Every writer (track, JSONL import, the stellar logger, the local engine) produces an Arrow
table with exactly these columns, so readers, summaries and exports see one shape. pyarrow
is imported lazily: commands that never touch metrics stay fast. A written file is folded
into its run's summaries at once; `ensure_summaries` folds the files that have none yet.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.evidence import atomic, paths, schema, summaries
from tau.evidence.errors import StoreConflict, StoreCorrupt
from tau.evidence.store import Store, Transaction, now

if TYPE_CHECKING:
    import pyarrow as pa


# Low-cardinality columns; dictionary-encoding the per-point tags would only cost time.
DICTIONARY_COLUMNS = ("project", "run_group_id", "run_id", "metric_name", "unit", "source", "split")


def arrow_schema() -> pa.Schema:
    import pyarrow as pa

    fields: list[pa.Field[Any]] = [
        pa.field("project", pa.string(), nullable=False),
        pa.field("run_group_id", pa.string(), nullable=False),
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("metric_name", pa.string(), nullable=False),
        pa.field("step", pa.int64()),
        pa.field("wall_time", pa.timestamp("us", tz="UTC")),
        pa.field("value", pa.float64(), nullable=False),
        pa.field("unit", pa.string()),
        pa.field("source", pa.string(), nullable=False),
        pa.field("split", pa.string()),
        pa.field("tags", pa.string(), nullable=False),
    ]
    return pa.schema(fields)


def from_rows(rows: list[dict[str, Any]]) -> pa.Table:
    """A point table from plain dicts (small writers: track, tests)."""
    import pyarrow as pa

    columns = {name: [row.get(name) for row in rows] for name in schema.METRIC_COLUMNS}
    return pa.Table.from_pydict(columns, schema=arrow_schema())


@dataclass(frozen=True)
class MetricFile:
    file_id: str
    path: str
    row_count: int
    created: bool


def write_metric_file(
    txn: Transaction,
    table: pa.Table,
    *,
    rel_path: str,
    file_id: str,
    project: str,
    run_group_id: str,
    run_id: str,
) -> MetricFile:
    """Write one Parquet file atomically, index it and fold it into the run's summaries."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if txn.fetch("metric_files", {"file_id": file_id}) is not None:
        # File ids are derived from the request hash: the same id means the same request.
        return MetricFile(file_id, rel_path, table.num_rows, created=False)
    table = table.cast(arrow_schema())
    buffer = io.BytesIO()
    # pyarrow-stubs type use_dictionary as bool; pyarrow also takes the column names.
    pq.write_table(table, buffer, compression="zstd", use_dictionary=list(DICTIONARY_COLUMNS))  # type: ignore[arg-type]
    data = buffer.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    steps = pc.min_max(table["step"])
    row = {
        "file_id": file_id,
        "path": rel_path,
        "format": "parquet",
        "schema_version": schema.METRIC_SCHEMA_VERSION,
        "schema_hash": schema.metric_schema_hash(),
        "project": project,
        "run_group_id": run_group_id,
        "run_id": run_id,
        "row_count": table.num_rows,
        "digest": digest,
        "min_step": steps["min"].as_py(),
        "max_step": steps["max"].as_py(),
        "created_at": now(),
    }
    atomic.write_bytes(paths.inside(txn.store.root, rel_path), data)
    txn.insert("metric_files", row)
    summaries.fold(txn, summaries.summarize(table), file_id=file_id, run_id=run_id)
    return MetricFile(file_id, rel_path, table.num_rows, created=True)


def read_file(path: Path) -> pa.Table:
    import pyarrow.parquet as pq

    return pq.read_table(path, schema=arrow_schema())


def read_stored(
    root: Path, rel_path: str, *, columns: list[str] | None = None, filters: Any = None
) -> pa.Table:
    """A metric file the catalogue names; a missing or damaged file is one StoreCorrupt line."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = paths.inside(root, rel_path)
    try:
        return pq.read_table(path, columns=columns, filters=filters)
    except (OSError, pa.ArrowException) as error:
        reason = getattr(error, "strerror", None) or str(error).splitlines()[0][:200]
        raise StoreCorrupt(
            f"{path}: metric file is unreadable ({reason})",
            hint="restore the store directory from a copy (taugrid-portal experiment export)",
            owner="the store's owner",
        ) from None


def ensure_summaries(store: Store, *, lock_wait: float = 0.0) -> list[str]:
    """Fold every indexed Parquet file that has no summary yet; returns warnings.

    `experiment init` calls this (readers never write the store); when the lock is busy the
    backfill is skipped with a warning instead of failing the command.
    """
    warnings: list[str] = []
    with contextlib.closing(store.connect(readonly=True)) as db:
        pending = db.execute(
            "SELECT f.file_id, f.path, f.format, f.run_id FROM metric_files f "
            "LEFT JOIN metric_summary_files s ON s.file_id = f.file_id "
            "WHERE s.file_id IS NULL"
        ).fetchall()
    if not pending:
        return warnings
    try:
        with store.mutate(lock_wait=lock_wait) as txn:
            for row in pending:
                if row["format"] != "parquet":
                    warnings.append(
                        f"metric file {row['file_id']}: format {row['format']!r} skipped"
                    )
                    continue
                try:
                    table = read_file(store.root / row["path"])
                except Exception as error:  # an unreadable file must not block every reader
                    warnings.append(f"metric file {row['file_id']} unreadable: {error}")
                    continue
                summaries.fold(
                    txn, summaries.summarize(table), file_id=row["file_id"], run_id=row["run_id"]
                )
    except StoreConflict:
        warnings.append("summary backfill skipped: the store is locked by another writer")
    return warnings

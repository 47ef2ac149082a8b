"""The experiment evidence store: SQLite catalogue, Parquet metrics, artifacts, summaries.

Public entry points (import from here; heavy libraries load only when used):

- `resolve_store_path(flag, env)`: `--store` / `TAU_EXP_STORE` / the scoped composite.
- `Store.create(root)` / `Store.open(root)`: the store handle.
- `init_experiment`, `track_run` (`TrackRequest`), `tag_run`, `import_jsonl` (`ImportRequest`).
- `ingest_run(store, run_record, metrics_jsonl, outputs_dir)`: one call for an engine that has
  finished a run locally (metrics history + output files).
"""

from __future__ import annotations

from tau.evidence.errors import StoreConflict, StoreCorrupt
from tau.evidence.ingest import ingest_run
from tau.evidence.jsonl import ImportRequest, import_jsonl
from tau.evidence.location import resolve_store_path
from tau.evidence.records import RunRecord, init_experiment, tag_run
from tau.evidence.store import Store
from tau.evidence.track import TrackRequest, track_run

__all__ = [
    "ImportRequest",
    "RunRecord",
    "Store",
    "StoreConflict",
    "StoreCorrupt",
    "TrackRequest",
    "import_jsonl",
    "ingest_run",
    "init_experiment",
    "resolve_store_path",
    "tag_run",
    "track_run",
]

"""The experiment evidence store: SQLite catalogue, Parquet metrics, artifacts, summaries.

Public entry points (import from here; each loads its module, and heavy libraries, on first use):

- `resolve_store_path(flag, env)`: `--store` / `TAU_EXP_STORE` / the scoped composite.
- `Store.create(root)` / `Store.open(root)`: the store handle.
- `init_experiment`, `track_run` (`TrackRequest`), `tag_run`, `import_jsonl` (`ImportRequest`).
- `ingest_run(store, run_record, metrics_jsonl, outputs_dir)`: one call for an engine that has
  finished a run locally (metrics history + output files).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.lazyexports import lazy_exports

if TYPE_CHECKING:
    from tau.evidence.errors import StoreConflict, StoreCorrupt
    from tau.evidence.ingest import ingest_run
    from tau.evidence.jsonl import ImportRequest, import_jsonl
    from tau.evidence.location import resolve_store_path
    from tau.evidence.records import RunRecord, init_experiment, tag_run
    from tau.evidence.store import Store
    from tau.evidence.track import TrackRequest, track_run

# Where each public name lives: `__getattr__` imports that module on first access, so a
# module that needs one constant (the renderers' `location.WORKSPACE_STORE_PATH`) does not
# load the store, SQLite and file locking with it.
_HOMES = {
    "StoreConflict": "errors",
    "StoreCorrupt": "errors",
    "ingest_run": "ingest",
    "ImportRequest": "jsonl",
    "import_jsonl": "jsonl",
    "resolve_store_path": "location",
    "RunRecord": "records",
    "init_experiment": "records",
    "tag_run": "records",
    "Store": "store",
    "TrackRequest": "track",
    "track_run": "track",
}

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


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())

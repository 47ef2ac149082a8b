"""Run lifecycle observations (`TauExpRunLifecycle` rows) kept beside a store's index.

The lifecycle recorder writes one row per observed transition of a Job, RayJob or Kueue
Workload; the Portal reads the latest row per durable id as durable run history. The rows
live in their own SQLite file (`lifecycle.sqlite`) rather than in `index.sqlite`: they are
high-frequency, metadata-only and written by a daemon, so they neither contend for the
catalogue's lock nor change the catalogue's schema version shared with other TauGrid tools.

`observation_id` is the primary key: a row replayed after a recorder restart is ignored, so
each transition is stored once however often it is observed.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from tau.errors import RuntimeFailure

FILE = "lifecycle.sqlite"
TABLE = "TauExpRunLifecycle"
VERSION = "tau.exp.lifecycle.v1"
TERMINAL = ("succeeded", "failed", "cancelled")
STATES = ("submitted", "queued", "admitted", "running", *TERMINAL)

# (column, Kusto type): the row contract shared by the store table, the ADX table, its JSON
# ingestion mapping and the KQL `taugrid-portal experiment kusto schema` prints.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("observed_at", "datetime"),
    ("observation_id", "string"),
    ("durable_id", "string"),
    ("run_id", "string"),
    ("workspace_id", "string"),
    ("result_scope", "string"),
    ("project", "string"),
    ("run_group_id", "string"),
    ("tags", "dynamic"),
    ("owning_resource_kind", "string"),
    ("owning_resource_name", "string"),
    ("namespace", "string"),
    ("cluster", "string"),
    ("resource_uid", "string"),
    ("resource_version", "string"),
    ("generation", "long"),
    ("submit_time", "datetime"),
    ("created_time", "datetime"),
    ("kueue_admitted_time", "datetime"),
    ("pod_start_time", "datetime"),
    ("completion_time", "datetime"),
    ("state", "string"),
    ("reason", "string"),
    ("message", "string"),
    ("local_queue", "string"),
    ("cluster_queue", "string"),
    ("workload_kind", "string"),
    ("image", "string"),
    ("image_digest", "string"),
    ("config_hash", "string"),
    ("code_sha", "string"),
    ("tau_command", "string"),
    ("result_path", "string"),
    ("result_pvc", "string"),
    ("artifact_uri", "string"),
    ("checkpoint_uri", "string"),
    ("controller_version", "string"),
    ("experiment_tracking", "string"),
    ("experiment_source", "string"),
    ("first_metric_time", "datetime"),
    ("latest_metric_time", "datetime"),
)
NAMES = tuple(name for name, _ in COLUMNS)
_SQL_TYPES = {"long": "INTEGER", "dynamic": "TEXT", "datetime": "TEXT", "string": "TEXT"}


def path(store_root: Path | str) -> Path:
    return Path(store_root) / FILE


def _connect(file: Path, *, readonly: bool) -> sqlite3.Connection:
    if readonly:
        db = sqlite3.connect(f"file:{file}?mode=ro", uri=True, isolation_level=None)
    else:
        db = sqlite3.connect(file, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA busy_timeout=5000")
    db.row_factory = sqlite3.Row
    return db


def _create(db: sqlite3.Connection) -> None:
    cols = ", ".join(
        f"{name} {_SQL_TYPES[kind]}" + (" PRIMARY KEY" if name == "observation_id" else "")
        for name, kind in COLUMNS
    )
    db.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({cols})")
    db.execute(f"CREATE INDEX IF NOT EXISTS idx_lifecycle_durable ON {TABLE} (durable_id)")
    db.execute(
        f"CREATE INDEX IF NOT EXISTS idx_lifecycle_scope ON {TABLE} (workspace_id, observed_at)"
    )
    db.execute("CREATE TABLE IF NOT EXISTS lifecycle_meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute(
        "INSERT INTO lifecycle_meta(key, value) VALUES ('schema_version', ?) "
        "ON CONFLICT(key) DO NOTHING",
        (VERSION,),
    )


def _check_version(db: sqlite3.Connection, file: Path) -> None:
    try:
        row = db.execute("SELECT value FROM lifecycle_meta WHERE key='schema_version'").fetchone()
    except sqlite3.OperationalError:
        row = None  # not a lifecycle file: no meta table
    if row is None or row[0] != VERSION:
        raise RuntimeFailure(
            f"{file} has lifecycle schema {row[0] if row else 'none'!r}, expected {VERSION!r}",
            hint="upgrade taugrid on every reader and writer of this store",
            owner="the store's owner",
        )


def _encode(row: Mapping[str, Any]) -> list[Any]:
    values = []
    for name, kind in COLUMNS:
        value = row.get(name)
        if kind == "dynamic":
            value = json.dumps(value or {}, sort_keys=True, separators=(",", ":"))
        elif kind == "long":
            value = int(value) if value not in (None, "") else None
        else:
            value = "" if value is None else str(value)
        values.append(value)
    return values


def append(store_root: Path | str, rows: Iterable[Mapping[str, Any]]) -> int:
    """Insert rows whose observation_id is new; returns how many were stored."""
    rows = list(rows)
    file = path(store_root)
    if not Path(store_root).is_dir():
        raise RuntimeFailure(
            f"experiment store {store_root} does not exist",
            hint="create it with `taugrid-portal experiment init NAME --store PATH`",
            owner="platform operator (the recorder's --store)",
        )
    with contextlib.closing(_connect(file, readonly=False)) as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            _create(db)
            _check_version(db, file)
            marks = ", ".join("?" for _ in NAMES)
            before = db.total_changes
            db.executemany(
                f"INSERT OR IGNORE INTO {TABLE} ({', '.join(NAMES)}) VALUES ({marks})",
                [_encode(r) for r in rows],
            )
            stored = db.total_changes - before
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return stored


def _decode(row: sqlite3.Row) -> dict[str, Any]:
    data = dict(row)
    data["tags"] = json.loads(data.get("tags") or "{}")
    return data


@contextlib.contextmanager
def _reader(store_root: Path | str) -> Iterator[sqlite3.Connection | None]:
    file = path(store_root)
    if not file.is_file():
        yield None
        return
    with contextlib.closing(_connect(file, readonly=True)) as db:
        if db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
            # The recorder's first append creates the file, then its tables in one
            # transaction: until that commits there is nothing stored, not a damaged store.
            yield None
            return
        _check_version(db, file)
        yield db


def rows(store_root: Path | str, durable_id: str = "") -> list[dict[str, Any]]:
    """Every stored row (of one durable id), oldest observation first."""
    with _reader(store_root) as db:
        if db is None:
            return []
        where, args = ("WHERE durable_id=?", [durable_id]) if durable_id else ("", [])
        found = db.execute(
            f"SELECT * FROM {TABLE} {where} ORDER BY observed_at, rowid", args
        ).fetchall()
    return [_decode(r) for r in found]


def latest(store_root: Path | str, *, workspace_id: str, limit: int) -> list[dict[str, Any]]:
    """The current row of the `limit` most recently observed runs of one workspace.

    Terminal states are monotonic: a later non-terminal row (a stale relist) never undoes a
    terminal one, matching the ADX dashboard function.
    """
    with _reader(store_root) as db:
        if db is None:
            return []
        found = db.execute(
            f"SELECT * FROM {TABLE} WHERE workspace_id=? ORDER BY observed_at, rowid",
            (workspace_id,),
        ).fetchall()
    current: dict[str, dict[str, Any]] = {}
    for row in found:
        seen = current.get(row["durable_id"])
        if seen is not None and seen["state"] in TERMINAL and row["state"] not in TERMINAL:
            continue
        current[row["durable_id"]] = _decode(row)
    ordered = sorted(current.values(), key=lambda r: r["observed_at"], reverse=True)
    return ordered[:limit]

"""Opening, creating and mutating a store directory.

Every mutation runs under the store lock inside one SQLite transaction. Records created by
the transaction are mirrored to `append-log/<family>.jsonl` just before commit; if the mirror
append or the commit fails, the appended bytes are cut off again and SQLite rolls back, so
the catalogue and its mirror never disagree.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.errors import RuntimeFailure, UsageError
from tau.evidence import atomic, lock, schema
from tau.evidence.errors import StoreConflict, StoreCorrupt

MANIFEST = "manifest.json"
INDEX = "index.sqlite"
APPEND_LOG_DIR = "append-log"
METRICS_DIR = "metrics"
ARTIFACTS_DIR = "artifacts"
BUSY_TIMEOUT_MS = 5000
MIRROR_JOURNAL = ".pending-mirror.json"
RESTORE_HINT = (
    "restore the store directory from a copy (taugrid-portal experiment export), or move it "
    "aside and re-import its histories; the Parquet files under metrics/ are untouched"
)

MIRROR_FAMILIES = (
    "experiments",
    "run_groups",
    "runs",
    "run_context",
    "configs",
    "tags",
    "artifacts",
    "metric_files",
    "idempotency_keys",
    "events",
    "observations",
)


_KEEPERS: OrderedDict[tuple[int, str], sqlite3.Connection] = OrderedDict()
_MAX_KEEPERS = 16


def _keep_open(path: Path) -> None:
    """Hold one idle read connection per store in this process.

    Closing the last connection to a WAL database checkpoints and deletes the WAL; without a
    keeper every mutation would pay for that. SQLite still checkpoints on its own schedule.
    """
    key = (os.getpid(), str(path))
    if key in _KEEPERS:
        _KEEPERS.move_to_end(key)
        return
    _KEEPERS[key] = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    while len(_KEEPERS) > _MAX_KEEPERS:
        _, oldest = _KEEPERS.popitem(last=False)
        with contextlib.suppress(sqlite3.Error):
            oldest.close()


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_hash(value: Any) -> str:
    import hashlib

    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


@dataclass
class Store:
    """A handle on one store directory; cheap to create, connections are per call."""

    root: Path
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def index_path(self) -> Path:
        return self.root / INDEX

    @property
    def metrics_dir(self) -> Path:
        return self.root / METRICS_DIR

    @property
    def artifacts_dir(self) -> Path:
        return self.root / ARTIFACTS_DIR

    @property
    def append_log_dir(self) -> Path:
        return self.root / APPEND_LOG_DIR

    @property
    def project(self) -> str:
        return str(self.manifest.get("project") or "")

    # -- opening -----------------------------------------------------------------------

    @classmethod
    def open(
        cls, root: Path | str, *, lock_wait: float = lock.WAIT_SECONDS, migrate: bool = True
    ) -> Store:
        """Open an existing store, migrating an older catalogue forward under the lock.

        `migrate=False` is for readers that must never write (the Portal): an older
        catalogue is refused instead of migrated.
        """
        store = cls(Path(root))
        store.manifest = store._read_manifest()
        try:
            with contextlib.closing(store.connect(readonly=True)) as db:
                version = schema.stored_version(db)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as error:  # garbled text pages too
            raise StoreCorrupt(
                f"{store.index_path} is not a readable SQLite index ({error})",
                hint=RESTORE_HINT,
                owner="the store's owner",
            ) from None
        if version is None:
            # The manifest says a catalogue exists; an empty file is a lost one. Rebuilding it
            # empty would orphan every Parquet file while every read reported "no runs".
            size = store.index_path.stat().st_size
            raise StoreCorrupt(
                f"{store.index_path} is empty ({size} bytes) but {MANIFEST} says this store "
                "has a catalogue; nothing was changed",
                hint=RESTORE_HINT,
                owner="the store's owner",
            )
        if version != schema.CURRENT and not migrate:
            raise RuntimeFailure(
                f"{store.index_path} is at schema expstore.v{version}, this reader needs "
                f"{schema.SCHEMA_VERSION} and never migrates",
                hint="migrate it with a TauGrid writer, e.g. `taugrid-portal experiment init "
                "NAME --store PATH`",
                owner="the store's owner",
            )
        if version != schema.CURRENT:
            with lock.exclusive(store.root, lock_wait), contextlib.closing(store.connect()) as db:
                db.execute("BEGIN IMMEDIATE")
                try:
                    schema.bring_up_to_date(db)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        return store

    @classmethod
    def create(
        cls,
        root: Path | str,
        *,
        project: str = "",
        experiment_id: str = "",
        lock_wait: float = lock.WAIT_SECONDS,
    ) -> Store:
        """Open the store at `root`, creating its layout first when it does not exist yet."""
        store = cls(Path(root))
        store.root.mkdir(parents=True, exist_ok=True)
        with lock.exclusive(store.root, lock_wait):
            if not (store.root / MANIFEST).exists():
                stamp = now()
                manifest = {
                    "schema_version": schema.SCHEMA_VERSION,
                    "kind": schema.STORE_KIND,
                    "project": project,
                    "experiment_id": experiment_id,
                    "created_at": stamp,
                    "updated_at": stamp,
                    "index": INDEX,
                    "append_log_dir": APPEND_LOG_DIR,
                    "metrics_dir": METRICS_DIR,
                    "artifacts_dir": ARTIFACTS_DIR,
                }
                for sub in (APPEND_LOG_DIR, METRICS_DIR, ARTIFACTS_DIR):
                    (store.root / sub).mkdir(exist_ok=True)
                with contextlib.closing(store.connect()) as db:
                    db.execute("BEGIN IMMEDIATE")
                    schema.bring_up_to_date(db)
                    db.execute("COMMIT")
                atomic.write_text(store.root / MANIFEST, json.dumps(manifest, indent=2) + "\n")
        return cls.open(store.root, lock_wait=lock_wait)

    def _read_manifest(self) -> dict[str, Any]:
        path = self.root / MANIFEST
        if not path.is_file():
            raise UsageError(
                f"{self.root} is not an experiment store (no {MANIFEST})",
                hint="create it with 'taugrid-portal experiment init NAME --store PATH'",
                owner="the user running the command",
            )
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as error:
            raise StoreCorrupt(
                f"{path} is unreadable: {type(error).__name__}",
                hint=RESTORE_HINT,
                owner="the store's owner",
            ) from None
        if not isinstance(manifest, dict) or manifest.get("kind") != schema.STORE_KIND:
            kind = manifest.get("kind") if isinstance(manifest, dict) else type(manifest).__name__
            raise StoreCorrupt(
                f"{path} has kind {str(kind)[:40]!r}, expected {schema.STORE_KIND!r}",
                hint=RESTORE_HINT,
                owner="the store's owner",
            )
        schema.check_manifest_version(path, manifest.get("schema_version"))
        return manifest

    def connect(self, *, readonly: bool = False) -> sqlite3.Connection:
        if readonly:
            uri = f"file:{self.index_path}?mode=ro"
            db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        else:
            db = sqlite3.connect(self.index_path, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            _keep_open(self.index_path)
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        db.row_factory = sqlite3.Row
        return db

    # -- mutating ----------------------------------------------------------------------

    @contextlib.contextmanager
    def mutate(self, *, lock_wait: float = lock.WAIT_SECONDS) -> Iterator[Transaction]:
        with lock.exclusive(self.root, lock_wait), contextlib.closing(self.connect()) as db:
            _recover_mirrors(self, db)
            db.execute("BEGIN IMMEDIATE")
            txn = Transaction(self, db)
            try:
                yield txn
                txn.commit()
            except BaseException:
                txn.abort()
                raise


class Transaction:
    """One locked SQLite transaction plus the mirror lines of the records it created."""

    def __init__(self, store: Store, db: sqlite3.Connection) -> None:
        self.store = store
        self.db = db
        self.created: dict[str, list[dict[str, Any]]] = {}
        self._appended: list[tuple[Path, int | None]] = []
        self._done = False

    # -- idempotency -------------------------------------------------------------------

    def claim_key(
        self, key: str, *, command: str, target_type: str, target_id: str, request_hash: str
    ) -> bool:
        """Record `key` for this request; True when the same request already ran (replay)."""
        if not key:
            return False
        row = self.db.execute(
            "SELECT command, target_id, request_hash FROM idempotency_keys WHERE key=?", (key,)
        ).fetchone()
        if row is None:
            self.insert(
                "idempotency_keys",
                {
                    "key": key,
                    "command": command,
                    "target_type": target_type,
                    "target_id": target_id,
                    "request_hash": request_hash,
                    "created_at": now(),
                },
            )
            return False
        if row["request_hash"] == request_hash:
            return True
        raise StoreConflict(
            f"idempotency key {key!r} was already used for a different request "
            f"({row['command']} {row['target_id']}); nothing was written",
            hint="use a new --idempotency-key or repeat the original request exactly",
            owner="the caller that chose the key",
        )

    # -- rows --------------------------------------------------------------------------

    def insert(self, table: str, row: Mapping[str, Any]) -> None:
        cols = list(row)
        marks = ", ".join("?" for _ in cols)
        self.db.execute(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", [row[c] for c in cols]
        )
        if table in MIRROR_FAMILIES:
            self.created.setdefault(table, []).append(dict(row))

    def fetch(self, table: str, key: Mapping[str, Any]) -> sqlite3.Row | None:
        where = " AND ".join(f"{c}=?" for c in key)
        found: sqlite3.Row | None = self.db.execute(
            f"SELECT * FROM {table} WHERE {where}", list(key.values())
        ).fetchone()
        return found

    def ensure(
        self,
        table: str,
        row: Mapping[str, Any],
        key: Sequence[str],
        *,
        compare: Sequence[str] | None = None,
    ) -> bool:
        """Insert `row` unless an identical one exists; True when it was created.

        A stored row whose compared fields differ is a conflict: stored evidence is never
        overwritten by a different value.
        """
        existing = self.fetch(table, {c: row[c] for c in key})
        if existing is None:
            self.insert(table, row)
            return True
        fields = compare if compare is not None else [c for c in row if c not in key]
        diffs = [c for c in fields if _norm(existing[c]) != _norm(row.get(c))]
        if diffs:
            ident = "/".join(str(row[c]) for c in key)
            raise StoreConflict(
                f"{table} record {ident!r} already exists with different {', '.join(diffs)}; "
                "stored evidence is never overwritten",
                hint="use a new id, or repeat the original values",
                owner="the caller writing the record",
            )
        return False

    # -- commit ------------------------------------------------------------------------

    def _append_mirrors(self) -> None:
        """Append the mirror lines, after journaling the sizes to cut back to on a crash.

        The journal names this transaction; the transaction records the same name in
        `schema_meta`. The next writer finding a journal keeps the lines only if that name
        committed (see `_recover_mirrors`). No fsync here: the mirror is a projection of
        index.sqlite, which is synced at commit, and a killed process loses nothing from the
        page cache.
        """
        directory = self.store.append_log_dir
        directory.mkdir(exist_ok=True)
        paths = {family: directory / f"{family}.jsonl" for family in self.created}
        sizes = {p.name: (p.stat().st_size if p.exists() else None) for p in paths.values()}
        txn_id = secrets.token_hex(8)
        journal = directory / MIRROR_JOURNAL
        temp = directory / f".{MIRROR_JOURNAL}.tmp"
        temp.write_text(json.dumps({"txn": txn_id, "sizes": sizes}))
        os.replace(temp, journal)
        self._appended.append((journal, None))
        self.db.execute(
            "INSERT INTO schema_meta(key, value) VALUES ('mirror_txn', ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (txn_id,),
        )
        for family, rows in self.created.items():
            path = paths[family]
            self._appended.append((path, sizes[path.name]))
            data = "".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in rows)
            with open(path, "ab") as handle:
                handle.write(data.encode("utf-8"))

    def _undo_mirrors(self) -> None:
        for path, size in reversed(self._appended):
            with contextlib.suppress(OSError):
                if size is None:
                    path.unlink(missing_ok=True)
                else:
                    os.truncate(path, size)
        self._appended.clear()

    def commit(self) -> None:
        try:
            if self.created:
                self._append_mirrors()
        except OSError as error:
            raise RuntimeFailure(
                f"could not append to the store's append-log ({error}); nothing was written",
                owner="the store's owner",
            ) from None
        self.db.execute("COMMIT")
        self._done = True
        (self.store.append_log_dir / MIRROR_JOURNAL).unlink(missing_ok=True)

    def abort(self) -> None:
        if self._done:
            return
        self._undo_mirrors()
        with contextlib.suppress(sqlite3.Error):
            self.db.execute("ROLLBACK")
        self._done = True


def _recover_mirrors(store: Store, db: sqlite3.Connection) -> None:
    """Finish what a killed writer left: keep its mirror lines only if its transaction committed."""
    journal = store.append_log_dir / MIRROR_JOURNAL
    if not journal.exists():
        return
    try:
        pending = json.loads(journal.read_text())
    except (OSError, ValueError):
        journal.unlink(missing_ok=True)  # torn before the appends began: nothing to undo
        return
    row = db.execute("SELECT value FROM schema_meta WHERE key='mirror_txn'").fetchone()
    if row is None or row[0] != pending.get("txn"):
        for name, size in pending.get("sizes", {}).items():
            path = store.append_log_dir / Path(name).name
            with contextlib.suppress(OSError):
                if size is None:
                    path.unlink(missing_ok=True)
                else:
                    os.truncate(path, size)
    journal.unlink(missing_ok=True)


def _norm(value: Any) -> Any:
    return "" if value is None else value

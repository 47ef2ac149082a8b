"""The `index.sqlite` catalogue: tables, indexes, and the forward-only migration chain.

The column lists below are the on-disk contract (`expstore.v5`). Opening an older file walks
single-step migrations up to the current version; a newer or unknown version is refused so
an old TauGrid never half-understands a newer store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from tau.evidence.errors import StoreCorrupt

SCHEMA_VERSION = "expstore.v5"
STORE_KIND = "tau.exp.store"
CURRENT = 5

METRIC_SCHEMA_VERSION = "tau.metrics.scalar.v2"
METRIC_COLUMNS = (
    "project",
    "run_group_id",
    "run_id",
    "metric_name",
    "step",
    "wall_time",
    "value",
    "unit",
    "source",
    "split",
    "tags",
)

# table -> ((column, declaration), ...); the first entries carry the primary key.
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "schema_meta": (("key", "TEXT PRIMARY KEY"), ("value", "TEXT NOT NULL DEFAULT ''")),
    "idempotency_keys": (
        ("key", "TEXT PRIMARY KEY"),
        ("command", "TEXT NOT NULL DEFAULT ''"),
        ("target_type", "TEXT NOT NULL DEFAULT ''"),
        ("target_id", "TEXT NOT NULL DEFAULT ''"),
        ("request_hash", "TEXT NOT NULL DEFAULT ''"),
        ("created_at", "TEXT NOT NULL DEFAULT ''"),
    ),
    "run_groups": (
        ("run_group_id", "TEXT PRIMARY KEY"),
        ("project", "TEXT NOT NULL DEFAULT ''"),
        ("name", "TEXT NOT NULL DEFAULT ''"),
        ("created_at", "TEXT NOT NULL DEFAULT ''"),
        ("updated_at", "TEXT NOT NULL DEFAULT ''"),
    ),
    "experiments": (
        ("experiment_id", "TEXT PRIMARY KEY"),
        ("project", "TEXT NOT NULL DEFAULT ''"),
        ("name", "TEXT NOT NULL DEFAULT ''"),
        ("description", "TEXT NOT NULL DEFAULT ''"),
        ("source", "TEXT NOT NULL DEFAULT ''"),
        ("created_at", "TEXT NOT NULL DEFAULT ''"),
        ("updated_at", "TEXT NOT NULL DEFAULT ''"),
    ),
    "runs": (
        ("run_id", "TEXT PRIMARY KEY"),
        ("project", "TEXT NOT NULL DEFAULT ''"),
        ("experiment_id", "TEXT NOT NULL DEFAULT ''"),
        ("run_group_id", "TEXT NOT NULL DEFAULT ''"),
        ("parent_run_id", "TEXT NOT NULL DEFAULT ''"),
        ("state", "TEXT NOT NULL DEFAULT ''"),
        ("owner", "TEXT NOT NULL DEFAULT ''"),
        ("created_at", "TEXT NOT NULL DEFAULT ''"),
        ("started_at", "TEXT NOT NULL DEFAULT ''"),
        ("completed_at", "TEXT NOT NULL DEFAULT ''"),
        ("config_hash", "TEXT NOT NULL DEFAULT ''"),
        ("code_sha", "TEXT NOT NULL DEFAULT ''"),
        ("image_digest", "TEXT NOT NULL DEFAULT ''"),
        ("tau_command", "TEXT NOT NULL DEFAULT ''"),
        ("result_uri", "TEXT NOT NULL DEFAULT ''"),
        ("index_version", "TEXT NOT NULL DEFAULT ''"),
    ),
    "run_context": (
        ("run_id", "TEXT PRIMARY KEY"),
        ("cluster", "TEXT NOT NULL DEFAULT ''"),
        ("namespace", "TEXT NOT NULL DEFAULT ''"),
        ("team", "TEXT NOT NULL DEFAULT ''"),
        ("profile", "TEXT NOT NULL DEFAULT ''"),
        ("lane", "TEXT NOT NULL DEFAULT ''"),
        ("local_queue", "TEXT NOT NULL DEFAULT ''"),
        ("cluster_queue", "TEXT NOT NULL DEFAULT ''"),
        ("kueue_workload", "TEXT NOT NULL DEFAULT ''"),
        ("pod_uid", "TEXT NOT NULL DEFAULT ''"),
        ("ray_job", "TEXT NOT NULL DEFAULT ''"),
        ("resource_claims", "TEXT NOT NULL DEFAULT ''"),
        ("gpu_class", "TEXT NOT NULL DEFAULT ''"),
        ("gpu_count", "INTEGER"),
        ("node_names", "TEXT NOT NULL DEFAULT ''"),
        ("mounts", "TEXT NOT NULL DEFAULT ''"),
        ("queue_wait_seconds", "REAL"),
        ("gpu_hours", "REAL"),
        ("estimated_cost", "REAL"),
        ("runtime", "TEXT NOT NULL DEFAULT ''"),
        ("dependencies", "TEXT NOT NULL DEFAULT ''"),
        ("log_uri", "TEXT NOT NULL DEFAULT ''"),
    ),
    "configs": (
        ("config_hash", "TEXT NOT NULL"),
        ("run_id", "TEXT NOT NULL"),
        ("format", "TEXT NOT NULL DEFAULT ''"),
        ("uri", "TEXT NOT NULL DEFAULT ''"),
        ("normalized_json", "TEXT NOT NULL DEFAULT ''"),
        ("indexed_fields", "TEXT NOT NULL DEFAULT ''"),
    ),
    "artifacts": (
        ("artifact_id", "TEXT PRIMARY KEY"),
        ("run_id", "TEXT NOT NULL DEFAULT ''"),
        ("type", "TEXT NOT NULL DEFAULT ''"),
        ("uri", "TEXT NOT NULL DEFAULT ''"),
        ("name", "TEXT NOT NULL DEFAULT ''"),
        ("durable_ref", "TEXT NOT NULL DEFAULT ''"),
        ("content_type", "TEXT NOT NULL DEFAULT ''"),
        ("digest", "TEXT NOT NULL DEFAULT ''"),
        ("size_bytes", "INTEGER"),
        ("step", "INTEGER"),
        ("tags", "TEXT NOT NULL DEFAULT ''"),
        ("rank", "INTEGER"),
        ("created_at", "TEXT NOT NULL DEFAULT ''"),
        ("preview", "TEXT NOT NULL DEFAULT ''"),
        ("external_ref", "TEXT NOT NULL DEFAULT ''"),
        ("caption", "TEXT NOT NULL DEFAULT ''"),
        ("direction", "TEXT NOT NULL DEFAULT 'output'"),
        ("alias", "TEXT"),
        ("source_artifact_id", "TEXT"),
        ("source_run_id", "TEXT"),
        ("source_dataset_name", "TEXT"),
        ("source_dataset_version", "TEXT"),
        ("source_dataset_digest", "TEXT"),
    ),
    "events": (
        ("event_id", "TEXT PRIMARY KEY"),
        ("run_id", "TEXT NOT NULL DEFAULT ''"),
        ("time", "TEXT NOT NULL DEFAULT ''"),
        ("type", "TEXT NOT NULL DEFAULT ''"),
        ("source", "TEXT NOT NULL DEFAULT ''"),
        ("severity", "TEXT NOT NULL DEFAULT ''"),
        ("message", "TEXT NOT NULL DEFAULT ''"),
        ("payload", "TEXT NOT NULL DEFAULT ''"),
    ),
    "observations": (
        ("observation_id", "TEXT PRIMARY KEY"),
        ("idempotency_key", "TEXT NOT NULL DEFAULT ''"),
        ("author", "TEXT NOT NULL DEFAULT ''"),
        ("source", "TEXT NOT NULL DEFAULT ''"),
        ("type", "TEXT NOT NULL DEFAULT ''"),
        ("scope_type", "TEXT NOT NULL DEFAULT ''"),
        ("scope_id", "TEXT NOT NULL DEFAULT ''"),
        ("text", "TEXT NOT NULL DEFAULT ''"),
        ("evidence", "TEXT NOT NULL DEFAULT ''"),
        ("created_at", "TEXT NOT NULL DEFAULT ''"),
    ),
    "tags": (
        ("scope_type", "TEXT NOT NULL"),
        ("scope_id", "TEXT NOT NULL"),
        ("key", "TEXT NOT NULL"),
        ("value", "TEXT NOT NULL DEFAULT ''"),
    ),
    "metric_files": (
        ("file_id", "TEXT PRIMARY KEY"),
        ("path", "TEXT NOT NULL DEFAULT ''"),
        ("format", "TEXT NOT NULL DEFAULT ''"),
        ("schema_version", "TEXT NOT NULL DEFAULT ''"),
        ("schema_hash", "TEXT NOT NULL DEFAULT ''"),
        ("project", "TEXT NOT NULL DEFAULT ''"),
        ("run_group_id", "TEXT NOT NULL DEFAULT ''"),
        ("run_id", "TEXT NOT NULL DEFAULT ''"),
        ("row_count", "INTEGER NOT NULL DEFAULT 0"),
        ("digest", "TEXT NOT NULL DEFAULT ''"),
        ("min_step", "INTEGER"),
        ("max_step", "INTEGER"),
        ("created_at", "TEXT NOT NULL DEFAULT ''"),
    ),
    "metric_summaries": (
        ("run_id", "TEXT NOT NULL"),
        ("metric_name", "TEXT NOT NULL"),
        ("project", "TEXT NOT NULL DEFAULT ''"),
        ("run_group_id", "TEXT NOT NULL DEFAULT ''"),
        ("count", "INTEGER NOT NULL DEFAULT 0"),
        ("finite_count", "INTEGER NOT NULL DEFAULT 0"),
        ("non_finite_count", "INTEGER NOT NULL DEFAULT 0"),
        ("min_step", "INTEGER"),
        ("max_step", "INTEGER"),
        ("latest_step", "INTEGER"),
        ("latest_wall_time", "TEXT"),
        ("latest_value", "REAL"),
        ("min_value", "REAL"),
        ("max_value", "REAL"),
        ("updated_at", "TEXT NOT NULL DEFAULT ''"),
        ("latest_file_id", "TEXT"),
    ),
    "metric_summary_files": (
        ("file_id", "TEXT PRIMARY KEY"),
        ("run_id", "TEXT NOT NULL DEFAULT ''"),
        ("summarized_at", "TEXT NOT NULL DEFAULT ''"),
    ),
}

COMPOSITE_KEYS = {
    "configs": ("config_hash", "run_id"),
    "tags": ("scope_type", "scope_id", "key"),
    "metric_summaries": ("run_id", "metric_name"),
}

INDEXES = {
    "idx_runs_group": ("runs", "run_group_id"),
    "idx_runs_state": ("runs", "state"),
    "idx_runs_experiment": ("runs", "experiment_id"),
    "idx_experiments_project": ("experiments", "project"),
    "idx_metric_files_run": ("metric_files", "run_id"),
    "idx_metric_summaries_metric": ("metric_summaries", "metric_name"),
    "idx_metric_summaries_group": ("metric_summaries", "run_group_id"),
    "idx_artifacts_run": ("artifacts", "run_id"),
    "idx_events_run_time": ("events", "run_id, time"),
    "idx_observations_scope": ("observations", "scope_type, scope_id"),
}


def columns(table: str) -> tuple[str, ...]:
    return tuple(name for name, _ in TABLES[table])


def _create_table_sql(table: str) -> str:
    parts = [f"{name} {decl}" for name, decl in TABLES[table]]
    if table in COMPOSITE_KEYS:
        parts.append(f"PRIMARY KEY ({', '.join(COMPOSITE_KEYS[table])})")
    return f"CREATE TABLE IF NOT EXISTS {table} ({', '.join(parts)})"


def _existing_tables(db: sqlite3.Connection) -> set[str]:
    rows = db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
    return {row[0] for row in rows}


def _existing_columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def check_manifest_version(path: object, value: object) -> None:
    """Refuse a manifest written by a newer (or unknown) TauGrid before reading anything."""
    if value is None:
        return  # early stores did not stamp the manifest; the index carries the version
    text = str(value)
    prefix = "expstore.v"
    number = text[len(prefix) :] if text.startswith(prefix) else ""
    if not (number.isascii() and number.isdigit()):
        raise StoreCorrupt(
            f"{path} has unknown schema_version {text[:40]!r}",
            hint=f"this TauGrid understands up to {SCHEMA_VERSION}; upgrade taugrid",
            owner="the store's owner",
        )
    if int(number) > CURRENT:
        raise StoreCorrupt(
            f"{path} schema_version {text} is newer than this TauGrid ({SCHEMA_VERSION}); "
            "nothing was read or changed",
            hint="upgrade taugrid to read this store",
            owner="the store's owner",
        )


def stored_version(db: sqlite3.Connection) -> int | None:
    """The numeric schema version on disk; None for an empty (new) file."""
    tables = _existing_tables(db)
    if "schema_meta" not in tables:
        return 0 if tables else None
    row = db.execute("SELECT value FROM schema_meta WHERE key='schema_version'").fetchone()
    if row is None:
        return 0
    text = str(row[0])
    prefix = "expstore.v"
    if not text.startswith(prefix) or not text[len(prefix) :].isdigit():
        raise StoreCorrupt(
            f"index.sqlite has unknown schema_version {text!r}",
            hint=f"this TauGrid understands up to {SCHEMA_VERSION}; upgrade taugrid",
            owner="the store's owner",
        )
    version = int(text[len(prefix) :])
    if version > CURRENT:
        raise StoreCorrupt(
            f"index.sqlite schema_version {text} is newer than this TauGrid ({SCHEMA_VERSION})",
            hint="upgrade taugrid to read this store",
            owner="the store's owner",
        )
    return version


def _v0_to_v1(db: sqlite3.Connection) -> None:
    for table in ("hypothesis_runs", "hypotheses", "hypothesis"):
        db.execute(f"DROP TABLE IF EXISTS {table}")


def _v1_to_v2(db: sqlite3.Connection) -> None:
    tables = _existing_tables(db)
    if "questions" in tables and "experiments" not in tables:
        db.execute("ALTER TABLE questions RENAME TO experiments")
        cols = _existing_columns(db, "experiments")
        if "question_id" in cols:
            db.execute("ALTER TABLE experiments RENAME COLUMN question_id TO experiment_id")
    if "question_runs" in tables and "run_experiments" not in tables:
        db.execute("ALTER TABLE question_runs RENAME TO run_experiments")
        if "question_id" in _existing_columns(db, "run_experiments"):
            db.execute("ALTER TABLE run_experiments RENAME COLUMN question_id TO experiment_id")


def _v2_to_v3(db: sqlite3.Connection) -> None:
    tables = _existing_tables(db)
    if "runs" not in tables:
        return
    if "experiment_id" not in _existing_columns(db, "runs"):
        db.execute("ALTER TABLE runs ADD COLUMN experiment_id TEXT NOT NULL DEFAULT ''")
    if "run_experiments" in tables:
        db.execute(
            "UPDATE runs SET experiment_id = COALESCE((SELECT MIN(re.experiment_id) "
            "FROM run_experiments re WHERE re.run_id = runs.run_id), '') "
            "WHERE experiment_id = ''"
        )
    if "run_group_id" in _existing_columns(db, "runs"):
        db.execute("UPDATE runs SET experiment_id = run_group_id WHERE experiment_id = ''")


def _v3_to_v4(db: sqlite3.Connection) -> None:
    tables = _existing_tables(db)
    if "stellar_workspaces" in tables and "stellar_dashboards" not in tables:
        db.execute("ALTER TABLE stellar_workspaces RENAME TO stellar_dashboards")


def _v4_to_v5(db: sqlite3.Connection) -> None:
    """Version bump only: v5 changed no structure."""


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    0: _v0_to_v1,
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
}


def metric_schema_hash() -> str:
    import hashlib

    return hashlib.sha256(",".join(METRIC_COLUMNS).encode()).hexdigest()


def bring_up_to_date(db: sqlite3.Connection) -> list[str]:
    """Create or migrate the catalogue inside the caller's transaction; returns steps taken."""
    version = stored_version(db)
    steps: list[str] = []
    if version is not None:
        while version < CURRENT:
            MIGRATIONS[version](db)
            steps.append(f"expstore.v{version} -> expstore.v{version + 1}")
            version += 1
    existing = _existing_tables(db)
    for table in TABLES:
        if table in existing:
            have = _existing_columns(db, table)
            for name, decl in TABLES[table]:
                if name not in have:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
        else:
            db.execute(_create_table_sql(table))
    for name, (table, cols) in INDEXES.items():
        db.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({cols})")
    meta = {
        "schema_version": SCHEMA_VERSION,
        "metric_schema_version": METRIC_SCHEMA_VERSION,
        "metric_schema_columns": ",".join(METRIC_COLUMNS),
    }
    for key, value in meta.items():
        db.execute(
            "INSERT INTO schema_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            (key, value),
        )
    return steps

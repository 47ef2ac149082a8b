"""index.sqlite: the v5 tables, columns and indexes; forward-only migration; newer is refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tau.evidence import Store, StoreCorrupt, init_experiment, schema

from .helpers import rows


def test_a_new_store_has_every_table_column_and_named_index(store_root: Path) -> None:
    init_experiment(store_root, "exp")
    with sqlite3.connect(store_root / "index.sqlite") as db:
        for table in schema.TABLES:
            have = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
            assert have == list(schema.columns(table)), table
        indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    assert set(schema.INDEXES) <= indexes
    meta = dict(rows(store_root, "SELECT key, value FROM schema_meta"))
    assert {
        k: meta[k] for k in ("schema_version", "metric_schema_version", "metric_schema_columns")
    } == {
        "schema_version": "expstore.v5",
        "metric_schema_version": "tau.metrics.scalar.v2",
        "metric_schema_columns": "project,run_group_id,run_id,metric_name,step,wall_time,value,"
        "unit,source,split,tags",
    }


def _legacy_v0_store(root: Path) -> None:
    """A store as an older TauGrid left it: questions instead of experiments, no experiment_id."""
    root.mkdir()
    manifest = {"schema_version": "expstore.v0", "kind": "tau.exp.store", "project": "old"}
    (root / "manifest.json").write_text(json.dumps(manifest))
    with sqlite3.connect(root / "index.sqlite") as db:
        db.executescript(
            """
            CREATE TABLE schema_meta (key TEXT PRIMARY KEY, value TEXT);
            INSERT INTO schema_meta VALUES ('schema_version', 'expstore.v0');
            CREATE TABLE hypotheses (id TEXT);
            CREATE TABLE questions (question_id TEXT PRIMARY KEY, project TEXT, name TEXT,
                                    description TEXT, source TEXT, created_at TEXT,
                                    updated_at TEXT);
            INSERT INTO questions VALUES ('q1', 'old', 'Q one', '', 'explicit', 't', 't');
            CREATE TABLE question_runs (question_id TEXT, run_id TEXT);
            INSERT INTO question_runs VALUES ('q1', 'r1');
            CREATE TABLE runs (run_id TEXT PRIMARY KEY, project TEXT, run_group_id TEXT,
                               state TEXT);
            INSERT INTO runs VALUES ('r1', 'old', 'g1', 'succeeded');
            INSERT INTO runs VALUES ('r2', 'old', 'g2', 'failed');
            """
        )


def test_an_older_store_is_migrated_forward_on_open(tmp_path: Path) -> None:
    root = tmp_path / "legacy"
    _legacy_v0_store(root)

    Store.open(root)

    assert rows(root, "SELECT value FROM schema_meta WHERE key='schema_version'") == [
        ("expstore.v5",)
    ]
    assert rows(root, "SELECT experiment_id, name FROM experiments") == [("q1", "Q one")]
    # Back-filled from the link table, else from the run group.
    assert rows(root, "SELECT run_id, experiment_id FROM runs ORDER BY run_id") == [
        ("r1", "q1"),
        ("r2", "g2"),
    ]
    tables = {r[0] for r in rows(root, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert "hypotheses" not in tables and "questions" not in tables
    assert {"metric_summaries", "metric_summary_files", "run_context"} <= tables
    # Additive columns arrived on the old runs table too.
    assert "index_version" in [r[1] for r in rows(root, "PRAGMA table_info(runs)")]


@pytest.mark.parametrize("version", ["expstore.v9", "mystery"])
def test_an_unknown_or_newer_schema_version_is_refused(store_root: Path, version: str) -> None:
    init_experiment(store_root, "exp")
    with sqlite3.connect(store_root / "index.sqlite") as db:
        db.execute("UPDATE schema_meta SET value=? WHERE key='schema_version'", (version,))

    with pytest.raises(StoreCorrupt, match="schema_version"):
        Store.open(store_root)


def test_a_directory_without_a_manifest_is_not_a_store(tmp_path: Path) -> None:
    from tau.errors import UsageError

    with pytest.raises(UsageError, match="not an experiment store"):
        Store.open(tmp_path)

"""`experiment init`: created/reused, idempotency conflicts, concurrency, mirror rollback, lock."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tau.evidence import Store, StoreConflict, init_experiment
from tau.evidence import lock as store_lock
from tau.evidence.records import ensure_experiment

from .helpers import mirror_lines, rows


def test_init_twice_reports_created_then_reused_with_one_row_and_one_mirror_line(
    store_root: Path,
) -> None:
    first = init_experiment(store_root, "nanogpt", description="NanoGPT API surface")
    second = init_experiment(store_root, "nanogpt", description="NanoGPT API surface")

    assert (first["status"], second["status"]) == ("created", "reused")
    assert rows(store_root, "SELECT experiment_id, project, source FROM experiments") == [
        ("nanogpt", "nanogpt", "explicit")
    ]
    assert len(mirror_lines(store_root, "experiments")) == 1
    assert rows(store_root, "SELECT run_group_id FROM run_groups") == [("default",)]


def test_init_creates_the_versioned_store_layout(store_root: Path) -> None:
    init_experiment(store_root, "exp", project="proj")
    manifest = Store.open(store_root).manifest

    assert manifest["schema_version"] == "expstore.v5"
    assert manifest["kind"] == "tau.exp.store"
    assert manifest["project"] == "proj"
    assert {p.name for p in store_root.iterdir()} >= {
        "manifest.json",
        "index.sqlite",
        "append-log",
        "metrics",
        "artifacts",
        ".tau-exp.lock",
    }
    assert not [p for p in store_root.iterdir() if ".tmp" in p.name]


def test_same_key_with_a_different_description_is_a_conflict_and_changes_nothing(
    store_root: Path,
) -> None:
    init_experiment(store_root, "exp", description="first", idempotency_key="k1")
    before = (store_root / "index.sqlite").read_bytes(), mirror_lines(store_root, "experiments")

    with pytest.raises(StoreConflict, match="already used for a different request"):
        init_experiment(store_root, "exp", description="second", idempotency_key="k1")

    assert rows(store_root, "SELECT description FROM experiments") == [("first",)]
    assert mirror_lines(store_root, "experiments") == before[1]


def test_same_key_and_request_replays_without_writing(store_root: Path) -> None:
    init_experiment(store_root, "exp", idempotency_key="k1")
    replay = init_experiment(store_root, "exp", idempotency_key="k1")

    assert replay["status"] == "reused"
    assert len(mirror_lines(store_root, "idempotency_keys")) == 1


def test_eight_concurrent_inits_from_real_processes_yield_one_row(store_root: Path) -> None:
    env = {**os.environ, "TAU_EXP_STORE": str(store_root)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tau.portal", "experiment", "init", "race", "-o", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(8)
    ]
    results = [(*p.communicate(timeout=60), p.returncode) for p in procs]

    assert all(code == 0 for _, _, code in results), [err for _, err, _ in results]
    statuses = sorted('"created"' in out for out, _, _ in results)
    assert statuses == [False] * 7 + [True]
    assert rows(store_root, "SELECT COUNT(*) FROM experiments") == [(1,)]
    assert len(mirror_lines(store_root, "experiments")) == 1


def test_a_failed_mirror_append_rolls_back_sqlite_and_truncates_appended_mirrors(
    store_root: Path,
) -> None:
    init_experiment(store_root, "exp")
    groups_before = (store_root / "append-log" / "run_groups.jsonl").read_bytes()
    # experiments.jsonl becomes unwritable (a directory): the append fails mid-commit.
    (store_root / "append-log" / "experiments.jsonl").unlink()
    (store_root / "append-log" / "experiments.jsonl").mkdir()

    with pytest.raises(Exception, match="append-log"):
        init_experiment(store_root, "other", group="g2")

    assert rows(store_root, "SELECT experiment_id FROM experiments") == [("exp",)]
    assert rows(store_root, "SELECT run_group_id FROM run_groups") == [("default",)]
    assert (store_root / "append-log" / "run_groups.jsonl").read_bytes() == groups_before


def test_a_held_lock_makes_writers_fail_with_a_conflict_after_the_bounded_wait(
    store_root: Path,
) -> None:
    init_experiment(store_root, "exp")
    store = Store.open(store_root)
    holding = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with store_lock.exclusive(store_root):
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(5)
    try:
        with (
            pytest.raises(StoreConflict, match="locked by another writer"),
            store.mutate(lock_wait=0.3) as txn,
        ):
            ensure_experiment(txn, "never", "p")
    finally:
        release.set()
        holder.join()
    assert rows(store_root, "SELECT experiment_id FROM experiments") == [("exp",)]


def test_a_lock_held_by_another_process_is_a_conflict_and_its_release_frees_the_store(
    store_root: Path,
) -> None:
    init_experiment(store_root, "exp")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from tau.evidence import lock\n"
            "with lock.exclusive(Path(sys.argv[1])):\n"
            "    print('held', flush=True); sys.stdin.readline()",
            str(store_root),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(StoreConflict, match="locked by another writer"),
            store_lock.exclusive(store_root, wait=0.3),
        ):
            pass
    finally:
        holder.communicate("\n", timeout=10)
    with store_lock.exclusive(store_root, wait=0.3):
        assert (store_root / store_lock.LOCK_NAME).exists()


def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(store_root: Path) -> None:
    init_experiment(store_root, "exp")
    db = Store.open(store_root).connect()
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    finally:
        db.close()


def test_a_damaged_index_is_a_one_line_store_error_through_the_portal(store_root: Path) -> None:
    init_experiment(store_root, "exp")
    (store_root / "index.sqlite").write_bytes(b"not a database, a half-copied file\n" * 200)
    portal = Path(sys.executable).parent / "taugrid-portal"
    result = subprocess.run(
        [str(portal), "experiment", "--store", str(store_root), "search"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: {store_root / 'index.sqlite'} is not a readable SQLite index (file is not a "
        "database); restore the store directory from a copy (taugrid-portal experiment export), "
        "or move it aside and re-import its histories; the Parquet files under metrics/ are "
        "untouched (owner: the store's owner)\n"
    )

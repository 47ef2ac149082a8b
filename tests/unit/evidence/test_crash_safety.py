"""Crash safety: kill -9 the importer at random points, then the store still holds each point once.

Each trial forks a real importer process (from a preloaded fork server, so a trial costs
milliseconds, not an interpreter start), kills it with SIGKILL after a seeded random delay
within the measured import time, checks the store opens and passes SQLite's integrity check,
and re-runs the same import, which must leave exactly the history's points (and exactly one
mirror line per record).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tau.evidence import ImportRequest, Store, import_jsonl, init_experiment
from tau.evidence.records import file_sha256

from .helpers import mirror_lines, rows

TRIALS = 50
SEED = 20261129
LINES = 800
METRICS = ("loss", "accuracy", "lr", "grad_norm")


def _import(
    root: str, run_id: str, history: str, started: multiprocessing.synchronize.Event
) -> None:
    started.set()
    import_jsonl(root, ImportRequest(run_id=run_id, history=[history], experiment="crash"))


@pytest.fixture(scope="module")
def forkserver() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tau.evidence.jsonl", "pyarrow.parquet", "pyarrow.json"])
    return ctx


def _history(path: Path) -> Path:
    with path.open("w") as handle:
        for step in range(LINES):
            row = {"_step": step, "_timestamp": 1760000000 + step}
            row.update({m: 1.0 / (step + i + 1) for i, m in enumerate(METRICS)})
            handle.write(json.dumps(row) + "\n")
    return path


def _points_once(root: Path, run_id: str) -> None:
    expected = LINES * len(METRICS)
    files = rows(root, "SELECT path, row_count, digest FROM metric_files WHERE run_id=?", run_id)
    assert sum(f[1] for f in files) == expected
    for path, count, digest in files:
        assert pq.read_table(root / path).num_rows == count
        assert file_sha256(root / path) == digest
    assert rows(root, "SELECT SUM(count) FROM metric_summaries WHERE run_id=?", run_id) == [
        (expected,)
    ]
    assert rows(root, "SELECT COUNT(*) FROM runs WHERE run_id=?", run_id) == [(1,)]
    # The append-log mirror agrees with the catalogue: no lines from a killed transaction.
    assert [r["run_id"] for r in mirror_lines(root, "runs")].count(run_id) == 1
    assert [r["run_id"] for r in mirror_lines(root, "metric_files")].count(run_id) == len(files)


def test_killing_the_importer_at_random_points_never_corrupts_or_duplicates(
    tmp_path: Path, forkserver: multiprocessing.context.BaseContext
) -> None:
    root = tmp_path / "store"
    init_experiment(root, "crash")
    history = str(_history(tmp_path / "history.jsonl"))

    # The slowest stretch a kill should land in: the fastest of three uninterrupted imports.
    durations = []
    for attempt in range(3):
        started = forkserver.Event()
        child = forkserver.Process(
            target=_import, args=(str(root), f"calibrate-{attempt}", history, started)
        )
        child.start()
        assert started.wait(30)
        begin = time.monotonic()
        child.join(60)
        durations.append(time.monotonic() - begin)
        assert child.exitcode == 0, "an uninterrupted import must succeed"
    duration = max(min(durations), 0.02)

    rng = random.Random(SEED)
    killed = 0
    for trial in range(TRIALS):
        run_id = f"crash-{trial}"
        started = forkserver.Event()
        child = forkserver.Process(target=_import, args=(str(root), run_id, history, started))
        child.start()
        assert started.wait(30)
        time.sleep(rng.uniform(0, duration))
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join(30)
        killed += child.exitcode == -signal.SIGKILL

        try:
            store = Store.open(root)
            with store.connect(readonly=True) as db:
                assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            import_jsonl(root, ImportRequest(run_id=run_id, history=[history], experiment="crash"))
            _points_once(root, run_id)
        except AssertionError as error:
            raise AssertionError(f"trial {trial} (exit {child.exitcode}): {error}") from error

    assert killed >= TRIALS // 2, f"only {killed} of {TRIALS} trials interrupted the importer"

"""The metrics offloader: history → workspace store, exactly once, with the pod handshake.

In-process tests pin the per-step contract (complete lines only, validation by line number,
metadata-only rows, renames, baselines, the completion file). The process tests start the
real `taugrid-portal experiment offload metrics --watch` and kill or signal it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tau.evidence import offload as offload_module
from tau.evidence.cluster_runs import ClusterRun, record_attempt
from tau.evidence.offload import OffloadConfig, Offloader
from tau.evidence.offload_state import load_checkpoint, read_completion

from .helpers import rows

METRICS = ("loss", "accuracy")


def line(step: int, **extra: object) -> str:
    row: dict[str, object] = {"_step": step, "_timestamp": 1760000000.125 + step}
    row.update({"loss": 1.0 / (step + 1), "accuracy": 1 - 1.0 / (step + 1)})
    row.update(extra)
    return json.dumps(row)


def append(path: Path, text: str) -> None:
    with path.open("a") as handle:
        handle.write(text)
        handle.flush()


def config(tmp_path: Path, **changes: object) -> OffloadConfig:
    values: dict[str, object] = {
        "store": tmp_path / "store",
        "out": tmp_path / "out",
        "history": (str(tmp_path / "history" / "*.jsonl"),),
        "run": ClusterRun(name="train", project="demo", experiment_id="exp", group="base"),
        "completion_file": tmp_path / "run" / "metrics-completion.json",
        "ready_file": tmp_path / "run" / "metrics-ready",
        "done_file": tmp_path / "run" / "metrics-done",
        "interval": 0.05,
        "shutdown_wait": 0.5,
    }
    values.update(changes)
    (tmp_path / "history").mkdir(exist_ok=True)
    (tmp_path / "run").mkdir(exist_ok=True)
    return OffloadConfig(**values)  # type: ignore[arg-type]


def stored_points(store: Path, run_id: str) -> list[tuple[str, int, float]]:
    files = rows(store, "SELECT path FROM metric_files WHERE run_id=?", run_id)
    points = []
    for (path,) in files:
        table = pq.read_table(store / path, columns=["metric_name", "step", "value"])
        points += list(zip(*(table[c].to_pylist() for c in table.column_names), strict=True))
    return sorted(points)


def workload_points(store: Path, run_id: str) -> list[tuple[str, int, float]]:
    return [p for p in stored_points(store, run_id) if p[0] != "tau/run_status"]


# -- one step ------------------------------------------------------------------------------


def test_only_complete_lines_are_imported_until_the_final_drain(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    history = tmp_path / "history" / "metrics.jsonl"
    append(history, line(0) + "\n" + line(1)[:20])
    offloader = Offloader(cfg)
    offloader.start()
    assert offloader.step().points == 2
    assert {p[1] for p in workload_points(cfg.store, "train")} == {0}
    append(history, line(1)[20:] + "\n" + line(2))  # step 1 completes; step 2 has no newline
    assert offloader.step().points == 2
    cfg.completion_file.write_text("")
    offloader.finish(read_completion(cfg.completion_file))
    assert {p[1] for p in workload_points(cfg.store, "train")} == {0, 1, 2}
    assert len(workload_points(cfg.store, "train")) == 6


def test_metadata_only_rows_are_checkpointed_without_writing_points(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    history = tmp_path / "history" / "metrics.jsonl"
    append(history, json.dumps({"_step": 0, "_timestamp": 1760000000, "note": "warmup"}) + "\n")
    offloader = Offloader(cfg)
    offloader.start()
    result = offloader.step()
    assert result.points == 0 and result.lines == 1
    assert rows(cfg.store, "SELECT count(*) FROM metric_files")[0][0] == 0
    assert load_checkpoint(cfg.out).files[str(history)].offset == history.stat().st_size


def test_a_bad_line_fails_its_chunk_by_line_number_and_keeps_the_checkpoint(
    tmp_path: Path,
) -> None:
    cfg = config(tmp_path)
    good = tmp_path / "history" / "a.jsonl"
    bad = tmp_path / "history" / "b.jsonl"
    append(good, line(0) + "\n")
    append(bad, line(0) + "\n" + json.dumps({"_step": 1.5, "_timestamp": 1760000001}) + "\n")
    said: list[str] = []
    offloader = Offloader(cfg, say=said.append)
    offloader.start()
    result = offloader.step()
    assert result.points == 2  # the good file still goes in
    assert len(result.errors) == 1 and "line 2" in result.errors[0]
    assert "_step must be an integer" in result.errors[0]
    state = load_checkpoint(cfg.out).files
    assert state[str(bad)].offset == 0 and state[str(good)].offset == good.stat().st_size
    offloader.step()  # the same error is reported once, not every interval
    assert sum("line 2" in s for s in said) == 1
    assert len(workload_points(cfg.store, "train")) == 2


def test_a_history_of_bare_nulls_is_a_line_error_not_a_crash(tmp_path: Path) -> None:
    # Arrow's JSON reader segfaults on `null` lines; in a child process, so a regression
    # shows as a dead sidecar (signal exit) rather than taking the test run down with it.
    history = tmp_path / "h.jsonl"
    history.write_bytes(b"null\nnull\n")
    probe = (
        "import sys; from pathlib import Path; from tau.evidence import offload\n"
        "try:\n"
        "    offload.validate_chunk(Path(sys.argv[1]), Path(sys.argv[1]).read_bytes(), 0)\n"
        "except offload.HistoryLineError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(history)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{history}: line 1: each line must be a JSON object"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"_step": 0}, "_timestamp must be positive"),
        ({"_step": 0, "_timestamp": -1}, "_timestamp must be positive"),
        ({"_step": 0, "_timestamp": 1e12}, "before year 10000"),
        ({"_timestamp": 1760000000, "loss": 1}, "_step must be an integer"),
        ({"_step": True, "_timestamp": 1760000000}, "_step must be an integer"),
        ("[1, 2]", "must be a JSON object"),
        ("{not json", "invalid JSON"),
        ('{"_step": 0, "_timestamp": 1760000000, "loss": NaN}', "loss must be a finite number"),
        ('{"_step": 0, "_timestamp": 1760000000, "loss": 1e999}', "loss must be a finite number"),
    ],
)
def test_every_line_is_validated(tmp_path: Path, row: object, message: str) -> None:
    text = row if isinstance(row, str) else json.dumps(row)
    with pytest.raises(offload_module.HistoryLineError, match=message) as caught:
        offload_module.validate_chunk(Path("h.jsonl"), (line(0) + "\n" + text + "\n").encode(), 0)
    assert "h.jsonl: line 2" in str(caught.value)


def test_a_renamed_file_is_not_read_again(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    first = tmp_path / "history" / "current.jsonl"
    append(first, line(0) + "\n" + line(1) + "\n")
    offloader = Offloader(cfg)
    offloader.start()
    assert offloader.step().points == 4
    first.rename(tmp_path / "history" / "rotated-0001.jsonl")
    append(tmp_path / "history" / "current.jsonl", line(2) + "\n")
    assert offloader.step().points == 2
    assert len(workload_points(cfg.store, "train")) == 6


def test_baseline_skips_an_earlier_attempts_rows_only_on_first_start(tmp_path: Path) -> None:
    cfg = config(tmp_path, baseline_existing_history=True)
    history = tmp_path / "history" / "metrics.jsonl"
    append(history, line(0) + "\n" + line(1) + "\n")
    offloader = Offloader(cfg)
    offloader.start()
    assert offloader.step().points == 0
    append(history, line(2) + "\n")
    restarted = Offloader(cfg)  # a restart keeps the checkpoint; no second baseline
    restarted.start()
    append(history, line(3) + "\n")
    assert restarted.step().points == 4
    assert {p[1] for p in workload_points(cfg.store, "train")} == {2, 3}


def test_a_batch_imported_before_a_crash_is_not_imported_twice(tmp_path: Path, monkeypatch) -> None:
    """The import committed but the process died before the checkpoint moved."""
    cfg = config(tmp_path)
    history = tmp_path / "history" / "metrics.jsonl"
    append(history, "".join(line(s) + "\n" for s in range(5)))
    real = offload_module.import_jsonl

    def import_then_die(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt  # killed right after commit

    monkeypatch.setattr(offload_module, "import_jsonl", import_then_die)
    offloader = Offloader(cfg)
    offloader.start()
    with pytest.raises(KeyboardInterrupt):
        offloader.step()
    assert load_checkpoint(cfg.out).pending is not None
    monkeypatch.setattr(offload_module, "import_jsonl", real)
    restarted = Offloader(cfg)
    restarted.start()
    append(history, line(5) + "\n")
    restarted.step()
    restarted.step()
    assert len(workload_points(cfg.store, "train")) == 12
    assert load_checkpoint(cfg.out).pending is None


# -- completion, the marker, attempts --------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "state", "value"),
    [
        ("", "succeeded", 1.0),
        ("done\n", "succeeded", 1.0),
        ('{"state": "errored", "reason": "workload-entrypoint-exit"}', "failed", -1.0),
        ("canceled", "cancelled", -2.0),
        ("exploded", "failed", -1.0),
    ],
)
def test_completion_file_decides_the_terminal_marker(
    tmp_path: Path, content: str, state: str, value: float
) -> None:
    cfg = config(tmp_path)
    append(tmp_path / "history" / "metrics.jsonl", line(0) + "\n")
    cfg.completion_file.write_text(content)
    os.utime(cfg.completion_file, (1760000100.5, 1760000100.5))
    result = Offloader(cfg).run_once()
    assert result["state"] == state
    (path,) = rows(cfg.store, "SELECT path FROM metric_files WHERE file_id LIKE 'track-%'")[0]
    marker = pq.read_table(cfg.store / path).to_pylist()
    assert [(m["metric_name"], m["step"], m["value"]) for m in marker] == [
        ("tau/run_status", 0, value)
    ]
    assert marker[0]["wall_time"] == datetime.fromtimestamp(1760000100.5, UTC)
    assert json.loads(marker[0]["tags"])["tau.status.state"] == state
    assert rows(cfg.store, "SELECT state FROM runs WHERE run_id='train'") == [(state,)]
    assert cfg.done_file.read_text() == "done\n"


def test_retries_and_resubmissions_become_attempts_with_lineage(tmp_path: Path) -> None:
    store = tmp_path / "store"
    base = ClusterRun(name="train", project="demo", experiment_id="exp", submission_id="s0")
    assert record_attempt(store, base).run_id == "train"
    assert record_attempt(store, base).created is False  # a restarted sidecar
    retry = ClusterRun(name="train", project="demo", submission_id="s1", attempt=1)
    assert record_attempt(store, retry).run_id == "train-attempt-1"
    resumed = ClusterRun(name="train", project="demo", submission_id="s2")
    assert record_attempt(store, resumed).run_id == "train-attempt-2"
    assert rows(store, "SELECT run_id, parent_run_id FROM runs ORDER BY run_id") == [
        ("train", ""),
        ("train-attempt-1", "train"),
        ("train-attempt-2", "train"),
    ]
    assert rows(store, "SELECT count(*) FROM events WHERE type='tau.attempt'") == [(3,)]


def test_submission_provenance_lands_on_the_run(tmp_path: Path) -> None:
    run = ClusterRun(
        name="train",
        project="demo",
        experiment_id="exp",
        group="base",
        submission_id="abc",
        namespace="research",
        workspace="shared-research",
        kind="RayJob",
        config_hash="c" * 64,
        code_sha="0" * 40,
        image_digest="sha256:" + "a" * 64,
        tau_command="tau run --config tau.yaml",
    )
    cfg = config(tmp_path, run=run)
    Offloader(cfg).start()
    assert rows(
        cfg.store,
        "SELECT state, config_hash, code_sha, image_digest, tau_command FROM runs",
    ) == [("running", "c" * 64, "0" * 40, "sha256:" + "a" * 64, "tau run --config tau.yaml")]
    assert rows(cfg.store, "SELECT namespace, ray_job FROM run_context") == [("research", "train")]
    tags = dict(rows(cfg.store, "SELECT key, value FROM tags WHERE scope_id='train'"))
    assert tags["tau.attempt"] == "0" and tags["tau.submission_id"] == "abc"


# -- the real process ------------------------------------------------------------------------


def offload_process(cfg: OffloadConfig, *extra: str) -> subprocess.Popen[str]:
    argv = [
        sys.executable,
        "-m",
        "tau.portal",
        "experiment",
        "--store",
        str(cfg.store),
        "offload",
        "metrics",
        "--watch",
        "--out",
        str(cfg.out),
        "--history",
        cfg.history[0],
        "--run",
        cfg.run.name,
        "--project",
        cfg.run.project,
        "--experiment",
        cfg.run.experiment_id,
        "--group",
        cfg.run.group,
        "--submission-id",
        "sub-1",
        "--completion-file",
        str(cfg.completion_file),
        "--ready-file",
        str(cfg.ready_file),
        "--done-file",
        str(cfg.done_file),
        "--interval",
        "100ms",
        *extra,
    ]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(path: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_killing_the_sidecar_repeatedly_duplicates_no_point(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    history = tmp_path / "history" / "metrics.jsonl"
    rng = random.Random(20261201)
    steps = 0
    stop = threading.Event()

    def trainer() -> None:
        nonlocal steps
        while not stop.is_set():
            append(history, line(steps) + "\n")
            steps += 1
            time.sleep(0.005)

    writer = threading.Thread(target=trainer)
    writer.start()
    try:
        for _ in range(6):
            process = offload_process(cfg)
            time.sleep(rng.uniform(0.6, 2.0))
            process.send_signal(signal.SIGKILL)
            process.wait()
    finally:
        stop.set()
        writer.join()
    cfg.completion_file.write_text("")
    process = offload_process(cfg)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    points = workload_points(cfg.store, "train")
    assert len(points) == steps * len(METRICS)
    assert len(set(points)) == len(points)
    assert rows(cfg.store, "SELECT state FROM runs") == [("succeeded",)]


def test_sigterm_waits_for_the_completion_file_then_flushes(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    history = tmp_path / "history" / "metrics.jsonl"
    process = offload_process(cfg, "--shutdown-wait", "30s")
    wait_for(cfg.ready_file)
    assert cfg.ready_file.read_text() == "ready\n"
    append(history, "".join(line(s) + "\n" for s in range(3)) + line(3))  # no final newline
    process.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert process.poll() is None  # still waiting for the workload's report
    cfg.completion_file.write_text(json.dumps({"state": "failed", "reason": "exit 3"}))
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert cfg.done_file.read_text() == "done\n"
    assert len(workload_points(cfg.store, "train")) == 8  # the partial tail too
    assert rows(cfg.store, "SELECT state FROM runs") == [("failed",)]


def test_sigterm_without_completion_marks_the_run_cancelled(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    append(tmp_path / "history" / "metrics.jsonl", line(0) + "\n")
    process = offload_process(cfg, "--shutdown-wait", "1s")
    wait_for(cfg.ready_file)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert rows(cfg.store, "SELECT state FROM runs") == [("cancelled",)]
    assert dict(rows(cfg.store, "SELECT key, value FROM tags"))["tau.status.reason"] == (
        "sidecar-shutdown"
    )
    assert len(workload_points(cfg.store, "train")) == 2

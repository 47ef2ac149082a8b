"""Stale, reused or hostile local run records: reported, never acted on, never a reader of
arbitrary files, and one bad record never hides the others."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.unit.engine.conftest import alive, project, run_name

CONFIG = """\
name: hello
engine: job
entrypoint: ../job.py
compute:
  gpus: 0
runtime:
  image: python:3.12-slim
"""


def bystander() -> subprocess.Popen:
    """An unrelated process leading its own group, as a reused pid would be."""
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True
    )


def write_record(local, name: str, **fields) -> Path:
    record = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "Job",
        "name": name,
        "launcher": "python",
        "config_path": "/nowhere/tau.yaml",
        "config_hash": "0" * 64,
        "state": "running",
        "created_at": "2026-01-01T00:00:00.000Z",
        **fields,
    }
    path = local.state / "runs" / name / "record.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return path


def attempt(pid: int, **fields) -> dict:
    return {"number": 1, "pid": pid, "started_at": "2026-01-01T00:00:01.000Z", **fields}


def test_cancel_with_reused_pids_signals_nothing_and_reports_the_record_stale(local, tmp_path):
    other = bystander()
    try:
        write_record(
            local,
            "old-run",
            supervisor_pid=other.pid,
            supervisor_stamp="boot:1",
            attempts=[attempt(other.pid, pid_stamp="boot:1")],
        )
        cancelled = local.tau("run", "cancel", "old-run", cwd=tmp_path)
        time.sleep(0.5)
        assert alive(other.pid), "cancel killed a process that was not the run's"
        assert cancelled.returncode == 0, cancelled.stderr
        assert "was not running" in cancelled.stderr and "nothing was signalled" in cancelled.stderr
        assert local.record("old-run")["reason"] == "Stale"
        status = local.status("old-run", cwd=tmp_path)
        assert status["status"]["state"] == "cancelled"
    finally:
        other.kill()
        other.wait()


def test_a_record_without_start_stamps_is_never_trusted_with_a_live_pid(local, tmp_path):
    other = bystander()
    try:
        write_record(local, "legacy", supervisor_pid=other.pid, attempts=[attempt(other.pid)])
        cancelled = local.tau("run", "cancel", "legacy", cwd=tmp_path)
        time.sleep(0.5)
        assert alive(other.pid)
        assert cancelled.returncode == 1 and cancelled.stderr.count("\n") == 1
        assert f"cannot verify that pid {other.pid} still belongs to it" in cancelled.stderr
        assert "nothing was signalled" in cancelled.stderr
    finally:
        other.kill()
        other.wait()


def test_status_does_not_mistake_a_reused_supervisor_pid_for_a_live_run(local, tmp_path):
    other = bystander()
    try:
        write_record(local, "orphan", supervisor_pid=other.pid, supervisor_stamp="boot:1")
        assert local.status("orphan", cwd=tmp_path)["status"]["state"] == "failed"
    finally:
        other.kill()
        other.wait()


def test_a_real_run_records_the_identity_cancel_checks(local, tmp_path):
    repo = project(tmp_path / "repo", "hello", CONFIG, {"job.py": "print('hi')\n"})
    started = local.tau("run", "hello", "--local", cwd=repo)
    assert started.returncode == 0, started.stderr
    record = local.record(run_name(started.stderr))
    assert record["supervisor_stamp"] and record["attempts"][0]["pid_stamp"]


@pytest.mark.parametrize(
    "damage",
    ["null created_at", "nested", "directory", "wrong name", "not an object", "bad attempt"],
)
def test_one_bad_record_is_skipped_with_a_warning_and_every_other_run_is_listed(
    local, tmp_path, damage
):
    repo = project(tmp_path / "repo", "hello", CONFIG, {"job.py": "print('hi')\n"})
    started = local.tau("run", "hello", "--local", cwd=repo)
    assert started.returncode == 0, started.stderr
    intact = run_name(started.stderr)
    path = local.state / "runs" / "broken" / "record.json"
    if damage == "directory":
        path.mkdir(parents=True)
    else:
        write_record(local, "broken")
        record = json.loads(path.read_text())
        if damage == "null created_at":
            record["created_at"] = None
        elif damage == "wrong name":
            record["name"] = "../../elsewhere"
        elif damage == "bad attempt":
            record["attempts"] = [{"number": "one", "pid": [1]}]
        else:
            record = [record]
        text = json.dumps(record)
        if damage == "nested":
            text = text[:-1] + ', "deep": ' + "[" * 50_000 + "]" * 50_000 + "}"
        path.write_text(text)
    listed = local.tau("run", "list", "--local", "-o", "json", cwd=repo)
    assert listed.returncode == 0, listed.stderr
    assert [run["name"] for run in json.loads(listed.stdout)["runs"]] == [intact]
    assert listed.stderr.startswith(f"warning: local run record {path} is unreadable (")
    assert "internal error" not in listed.stderr and listed.stderr.count("\n") == 1
    shown = local.tau("run", "status", "broken", cwd=repo)
    assert shown.returncode == 1 and shown.stderr.count("\n") == 1


def test_logs_reads_only_the_runs_own_log(local, tmp_path):
    repo = project(tmp_path / "repo", "hello", CONFIG, {"job.py": "print('hi')\n"})
    started = local.tau("run", "hello", "--local", cwd=repo)
    name = run_name(started.stderr)
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("TOPSECRET\n")
    path = local.state / "runs" / name / "record.json"
    record = json.loads(path.read_text())
    record["attempts"][0]["log"] = str(secret)
    path.write_text(json.dumps(record))

    logs = local.tau("logs", name, cwd=repo)
    assert logs.returncode == 0 and logs.stdout == "hi\n"

    log = local.state / "runs" / name / "attempt-1.log"
    log.unlink()
    log.symlink_to(secret)
    logs = local.tau("logs", name, cwd=repo)
    assert "TOPSECRET" not in logs.stdout + logs.stderr
    assert logs.returncode == 1 and "is not a log file inside the run's directory" in logs.stderr


NESTED = """\
import os
from pathlib import Path

out = Path(os.environ["TAU_OUTPUT_DIR"])
out.mkdir(parents=True, exist_ok=True)
(out / "metrics.jsonl").write_text('{"_step": 0, "loss": 1}\\n' + "[" * 40000 + "\\n")
print("wrote history")
"""


def test_a_hostile_metrics_history_is_a_named_warning_not_a_crashed_supervisor(local, tmp_path):
    config = (
        CONFIG.replace("../job.py", "../nested.py") + "metrics:\n  history:\n    - metrics.jsonl\n"
    )
    repo = project(tmp_path / "repo", "nested", config, {"nested.py": NESTED})
    started = local.tau("run", "nested", "--local", cwd=repo)
    assert started.returncode == 0, started.stderr
    name = run_name(started.stderr)
    assert "internal error" not in started.stderr
    assert f"warning: evidence for {name} not recorded in " in started.stderr
    assert "metrics.jsonl:2: JSON nested deeper than 64 levels" in started.stderr
    record = local.record(name)
    assert record["state"] == "succeeded"
    assert "JSON nested deeper than 64 levels" in record["evidence"]["error"]

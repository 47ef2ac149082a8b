"""A damaged local run record is named with its fix and never hides the other runs."""

from __future__ import annotations

import json

from tests.unit.engine.conftest import project, run_name

CONFIG = """\
name: hello
engine: job
entrypoint: ../job.py
compute:
  gpus: 0
runtime:
  image: python:3.12-slim
"""


def test_a_garbled_record_is_one_line_error_and_list_still_shows_the_rest(local, tmp_path):
    repo = project(tmp_path / "repo", "hello", CONFIG, {"job.py": "print('hi')\n"})
    names = []
    for _ in range(2):
        started = local.tau("run", "hello", "--local", cwd=repo)
        assert started.returncode == 0, started.stderr
        names.append(run_name(started.stderr))
    broken, intact = names
    record = local.state / "runs" / broken / "record.json"
    record.write_text('{"name": "hello-')  # cut short: a full disk or a bad copy

    for verb in (("run", "status", broken), ("logs", broken), ("run", "get", broken)):
        shown = local.tau(*verb, cwd=repo)
        assert shown.returncode == 1 and shown.stdout == ""
        assert shown.stderr.count("\n") == 1 and "Traceback" not in shown.stderr
        assert shown.stderr.startswith(f"error: local run record {record} is unreadable (")
        assert f"delete {record.parent} to forget that run" in shown.stderr

    listed = local.tau("run", "list", "--local", "-o", "json", cwd=repo)
    assert listed.returncode == 0
    assert [run["name"] for run in json.loads(listed.stdout)["runs"]] == [intact]
    assert listed.stderr.startswith(f"warning: local run record {record} is unreadable")

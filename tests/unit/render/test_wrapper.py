"""The rendered container wrapper, run for real by dash and busybox sh.

The pod's two halves run here as two processes sharing a runtime directory: the wrapper
(rendered exactly as in the Job) around a small trainer, and the real offloader. What the
researcher relies on: a successful run publishes a complete, marked set; a failed or refused
one publishes nothing and says why in the completion file; the offloader settles the run.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tau import keys
from tau.evidence.publish import completed_publications
from tau.render import wrapper

from . import intents

SHELLS = [shell for shell in ("dash", "busybox") if shutil.which(shell)]
PUBLICATION = "0123456789abcdef01234567"


@pytest.fixture(params=SHELLS)
def shell(request) -> list[str]:
    assert SHELLS, "no POSIX sh (dash or busybox) on this machine"
    return ["busybox", "sh"] if request.param == "busybox" else ["dash"]


def env_for(tmp_path: Path) -> dict[str, str]:
    runtime = tmp_path / "run"
    runtime.mkdir(exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin",
        keys.ENV_OUTPUT_DIR: str(tmp_path / "data" / "out"),
        keys.ENV_OUTPUT_STAGING_DIR: str(tmp_path / "mnt" / "staging"),
        keys.ENV_METRICS_READY_FILE: str(runtime / "metrics-ready"),
        keys.ENV_METRICS_DONE_FILE: str(runtime / "metrics-done"),
        keys.ENV_METRICS_COMPLETION_FILE: str(runtime / "metrics-completion.json"),
    }


def wrapped(shell: list[str], intent, trainer: str) -> list[str]:
    command = wrapper.wrap_command(intent, [sys.executable, "-c", trainer])
    assert command[:2] == ["/bin/sh", "-c"]
    return [*shell, *command[1:]]


def staged_only():
    return dataclasses.replace(
        intents.everything_job(), metrics_offload=None, publication_id=PUBLICATION
    )


WRITE_OUTPUTS = (
    "import os, pathlib, sys\n"
    "d = pathlib.Path(os.environ['TAU_OUTPUT_STAGING_DIR']); d.mkdir(parents=True)\n"
    "(d / 'model.safetensors').write_bytes(b'weights')\n"
    "(d / 'metrics.json').write_text('{\"loss\": 0.1}')\n"
)


def test_success_publishes_a_complete_marked_set(tmp_path: Path, shell) -> None:
    env = env_for(tmp_path)
    done = subprocess.run(wrapped(shell, staged_only(), WRITE_OUTPUTS), env=env, timeout=60)
    assert done.returncode == 0
    [publication] = completed_publications(Path(env[keys.ENV_OUTPUT_DIR]))
    assert publication.publication_id == PUBLICATION
    assert publication.files == ("metrics.json", "model.safetensors")
    assert (publication.path / "model.safetensors").read_bytes() == b"weights"
    assert (publication.path / ".tau-artifacts-complete").read_text() == f"complete {PUBLICATION}\n"
    assert not list(publication.path.glob(".tau-publish-*"))


def test_a_failed_attempt_publishes_nothing_and_keeps_its_exit_code(tmp_path: Path, shell):
    env = env_for(tmp_path)
    trainer = WRITE_OUTPUTS + "sys.exit(3)\n"
    done = subprocess.run(wrapped(shell, staged_only(), trainer), env=env, timeout=60)
    assert done.returncode == 3
    assert not Path(env[keys.ENV_OUTPUT_DIR]).exists()


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("(d / 'plots').mkdir()\n", "plots: not a regular file"),
        ("(d / 'link').symlink_to(d / 'metrics.json')\n", "link: symlinks are not published"),
        ("(d / '.tau-artifacts-complete').write_text('x')\n", "reserved name"),
    ],
)
def test_unpublishable_outputs_are_refused_whole(tmp_path: Path, shell, extra, reason) -> None:
    env = env_for(tmp_path)
    done = subprocess.run(
        wrapped(shell, staged_only(), WRITE_OUTPUTS + extra),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == wrapper.EXIT_PUBLISH_REFUSED
    assert reason in done.stderr
    assert completed_publications(Path(env[keys.ENV_OUTPUT_DIR])) == []
    target = Path(env[keys.ENV_OUTPUT_DIR]) / ".tau-artifacts" / PUBLICATION
    assert not list(target.iterdir())


def test_republishing_accepts_identical_files_and_refuses_different_ones(tmp_path, shell):
    env = env_for(tmp_path)
    command = wrapped(
        shell,
        staged_only(),
        WRITE_OUTPUTS.replace("mkdir(parents=True)", "mkdir(parents=True, exist_ok=True)"),
    )
    assert subprocess.run(command, env=env, timeout=60).returncode == 0
    assert subprocess.run(command, env=env, timeout=60).returncode == 0
    target = Path(env[keys.ENV_OUTPUT_DIR]) / ".tau-artifacts" / PUBLICATION / "metrics.json"
    target.chmod(0o644)
    target.unlink()
    target.write_text("tampered")
    (target.parent / ".tau-artifacts-complete").unlink()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == wrapper.EXIT_PUBLISH_REFUSED
    assert "exists with different content" in done.stderr
    assert target.read_text() == "tampered"
    assert completed_publications(Path(env[keys.ENV_OUTPUT_DIR])) == []


# -- the offload handshake with the real offloader ------------------------------------------

TRAINER = (
    "import json, os, pathlib, sys, time\n"
    "out = pathlib.Path(os.environ['TAU_OUTPUT_DIR']) / 'metrics-history-attempt-0'\n"
    "out.mkdir(parents=True, exist_ok=True)\n"
    "for step in range({steps}):\n"
    "    tmp = out / f'.chunk-{{step:06d}}.tmp'\n"
    "    row = {{'_step': step, '_timestamp': 1760000000.125 + step, 'loss': 1 / (step + 1),\n"
    "           'accuracy': 1 - 1 / (step + 1)}}\n"
    "    tmp.write_text(json.dumps(row) + '\\n'); tmp.rename(out / f'chunk-{{step:06d}}.jsonl')\n"
    "    time.sleep(0.02)\n"
    "sys.exit({code})\n"
)


def offloader(tmp_path: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    out = Path(env[keys.ENV_OUTPUT_DIR])
    argv = [
        sys.executable,
        "-m",
        "tau.portal",
        "experiment",
        "--store",
        str(tmp_path / "data" / ".tau" / "expstore"),
        "offload",
        "metrics",
        "--watch",
        "--interval",
        "100ms",
        "--out",
        str(tmp_path / "run" / "offload"),
        "--history",
        f"{out}/metrics-history-attempt-0/*.jsonl",
        "--run",
        "portal-ray-stellar",
        "--project",
        "portal-demo",
        "--experiment",
        "ray-plus-stellar",
        "--submission-id",
        "s1",
        "--baseline-existing-history",
        "--ready-file",
        env[keys.ENV_METRICS_READY_FILE],
        "--done-file",
        env[keys.ENV_METRICS_DONE_FILE],
        "--completion-file",
        env[keys.ENV_METRICS_COMPLETION_FILE],
    ]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def store_state(tmp_path: Path) -> tuple[str, dict[str, int]]:
    import sqlite3

    db = sqlite3.connect(tmp_path / "data" / ".tau" / "expstore" / "index.sqlite")
    with db:
        (state,) = db.execute("SELECT state FROM runs WHERE run_id='portal-ray-stellar'").fetchone()
        counts = dict(db.execute("SELECT metric_name, count FROM metric_summaries").fetchall())
    db.close()
    return state, counts


@pytest.mark.parametrize(("code", "state"), [(0, "succeeded"), (3, "failed")])
def test_the_wrapper_and_the_offloader_settle_the_run_together(tmp_path, shell, code, state):
    env = env_for(tmp_path)
    intent = dataclasses.replace(intents.everything_job(), staged_publish=False)
    sidecar = offloader(tmp_path, env)
    main = subprocess.run(
        wrapped(shell, intent, TRAINER.format(steps=20, code=code)), env=env, timeout=120
    )
    _, err = sidecar.communicate(timeout=120)
    assert (main.returncode, sidecar.returncode) == (code, 0), err
    completion = json.loads(Path(env[keys.ENV_METRICS_COMPLETION_FILE]).read_text())
    assert completion["state"] == state and completion["reason"] == "workload-entrypoint-exit"
    assert store_state(tmp_path) == (
        state,
        {"loss": 20, "accuracy": 20, "tau/run_status": 1},
    )


def test_sigterm_reaches_the_workload_and_is_recorded_as_cancelled(tmp_path, shell) -> None:
    env = env_for(tmp_path)
    intent = dataclasses.replace(intents.everything_job(), staged_publish=False)
    sidecar = offloader(tmp_path, env)
    main = subprocess.Popen(wrapped(shell, intent, TRAINER.format(steps=100000, code=0)), env=env)
    history = Path(env[keys.ENV_OUTPUT_DIR]) / "metrics-history-attempt-0"
    deadline = time.monotonic() + 60
    while len(list(history.glob("*.jsonl"))) < 5:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    main.send_signal(signal.SIGTERM)
    assert main.wait(timeout=60) == 128 + signal.SIGTERM
    sidecar.communicate(timeout=60)
    completion = json.loads(Path(env[keys.ENV_METRICS_COMPLETION_FILE]).read_text())
    assert (completion["state"], completion["reason"]) == ("cancelled", "workload-termination")
    state, counts = store_state(tmp_path)
    assert state == "cancelled" and counts["loss"] == len(list(history.glob("*.jsonl")))

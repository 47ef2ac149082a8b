"""Cancelling a local run kills its whole process tree, from another terminal or by Ctrl-C;
a closed terminal pipe neither stops nor orphans it."""

from __future__ import annotations

import signal
import time

from tests.unit.engine.conftest import alive, project

# The target starts a child that starts a grandchild; all three record their pids and wait.
TREE = """\
import os, subprocess, sys, time
from pathlib import Path

pids = Path(os.environ["TAU_OUTPUT_DIR"]) / "pids"
pids.parent.mkdir(parents=True, exist_ok=True)
if len(sys.argv) > 1 and sys.argv[1] == "--child":
    depth = int(sys.argv[2])
    if depth < 2:
        subprocess.Popen([sys.executable, __file__, "--child", str(depth + 1)])
    with open(pids, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(600)
else:
    subprocess.Popen([sys.executable, __file__, "--child", "1"])
    with open(pids, "a") as f:
        f.write(f"{os.getpid()}\\n")
    print("tree started", flush=True)
    time.sleep(600)
"""

CONFIG = """\
name: tree
engine: job
entrypoint: ../tree.py
compute:
  gpus: 0
runtime:
  image: python:3.12-slim
"""


def start_tree(local, tmp_path, **popen):
    repo = project(tmp_path / "repo", "tree", CONFIG, {"tree.py": TREE})
    supervisor = local.popen("run", "tree", "--local", cwd=repo, **popen)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and supervisor.poll() is None:
        names = local.runs()
        if names:
            pids = local.data / "checkpoints" / "workflows" / names[0] / "pids"
            if pids.exists() and len(pids.read_text().split()) == 3:
                return repo, supervisor, names[0], [int(p) for p in pids.read_text().split()]
        time.sleep(0.1)
    supervisor.kill()
    raise AssertionError(f"the process tree did not start: {supervisor.communicate()}")


def wait_gone(pids: list[int], seconds: float = 15) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def test_cancel_from_another_terminal_kills_the_whole_tree(local, tmp_path):
    repo, supervisor, name, pids = start_tree(local, tmp_path)
    assert local.status(name, cwd=repo)["status"]["state"] == "running"
    cancelled = local.tau("run", "cancel", name, cwd=repo)
    assert cancelled.returncode == 0, cancelled.stderr
    assert f"local run {name} cancelled; no process of it remains" in cancelled.stderr
    assert wait_gone(pids) == []
    _, err = supervisor.communicate(timeout=30)
    assert supervisor.returncode == 130, err
    doc = local.status(name, cwd=repo)
    assert doc["status"]["state"] == "cancelled"
    assert doc["phases"][-1]["name"] == "Failed"
    again = local.tau("run", "cancel", name, cwd=repo)
    assert again.returncode == 0 and "already cancelled" in again.stderr


def test_ctrl_c_cancels_cleanly(local, tmp_path):
    _, supervisor, name, pids = start_tree(local, tmp_path)
    supervisor.send_signal(signal.SIGINT)
    _, err = supervisor.communicate(timeout=30)
    assert supervisor.returncode == 130, err
    assert f"cancelling local run {name} (SIGINT)" in err
    assert "Traceback" not in err
    assert wait_gone(pids) == []
    assert local.record(name)["state"] == "cancelled"


def default_hangup() -> None:  # as a terminal session starts it, even under `nohup pytest`
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def test_a_closed_terminal_cancels_cleanly_instead_of_orphaning_the_tree(local, tmp_path):
    _, supervisor, name, pids = start_tree(local, tmp_path, preexec_fn=default_hangup)
    supervisor.send_signal(signal.SIGHUP)
    _, err = supervisor.communicate(timeout=30)
    assert supervisor.returncode == 130, err
    assert f"cancelling local run {name} (SIGHUP)" in err
    assert wait_gone(pids) == []
    assert local.record(name)["state"] == "cancelled"


def test_a_run_whose_supervisor_died_is_reported_failed_and_cancel_still_kills_it(local, tmp_path):
    repo, supervisor, name, pids = start_tree(local, tmp_path)
    supervisor.kill()  # kill -9 of tau itself: the tree lives on in its own session
    supervisor.communicate(timeout=30)
    assert all(alive(p) for p in pids)
    assert local.status(name, cwd=repo)["status"]["state"] == "failed"
    cancelled = local.tau("run", "cancel", name, cwd=repo)
    assert cancelled.returncode == 0, cancelled.stderr
    assert wait_gone(pids) == []


TICKS = """\
import time
for i in range(3):
    print(f"tick {i}", flush=True)
    time.sleep(0.5)
print("done", end="")
"""


def test_logs_follow_streams_a_running_run_until_it_ends(local, tmp_path):
    config = CONFIG.replace("../tree.py", "../ticks.py")
    repo = project(tmp_path / "repo", "ticks", config, {"ticks.py": TICKS})
    supervisor = local.popen("run", "ticks", "--local", cwd=repo)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        (local.state / "runs" / n / "record.json").exists() for n in local.runs()
    ):
        time.sleep(0.05)
    (name,) = local.runs()
    followed = local.tau("logs", name, "-f", "--tail", "-1", cwd=repo, timeout=60)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.splitlines() == ["tick 0", "tick 1", "tick 2", "done"]
    supervisor.communicate(timeout=30)
    assert supervisor.returncode == 0


def test_a_reader_that_goes_away_does_not_stop_or_orphan_the_run(local, tmp_path):
    """`tau run T --local | head -1`: the run still finishes and is recorded as succeeded."""
    chatty = (
        "import time\nfor i in range(20):\n    print('line', i, flush=True)\n    time.sleep(0.05)\n"
    )
    config = CONFIG.replace("name: tree", "name: chatty").replace("../tree.py", "../job.py")
    repo = project(tmp_path / "repo", "chatty", config, {"job.py": chatty})
    proc = local.popen("run", "chatty", "--local", cwd=repo)
    assert proc.stdout.readline() == "line 0\n"
    proc.stdout.close()  # the reader goes away, as `head -1` does
    assert proc.wait(timeout=60) == 0
    stderr = proc.stderr.read()
    assert "Traceback" not in stderr and "succeeded" in stderr
    [name] = local.runs()
    assert local.record(name)["state"] == "succeeded"
    assert len(local.record(name)["attempts"]) == 1
    assert (local.state / "runs" / name / "attempt-1.log").read_text().count("line ") == 20

"""Cancel a local run (its whole process tree) from any terminal."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from tau.engine import records
from tau.engine.records import LocalRun
from tau.engine.status import supervisor_alive
from tau.engine.supervise import GRACE_SECONDS, kill_group
from tau.errors import RuntimeFailure

POLL_SECONDS = 0.1


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cancel(
    name: str, *, echo: Callable[[str], None], timeout: float = GRACE_SECONDS + 20
) -> LocalRun:
    """Ask the supervising tau to cancel; if it is gone, kill the process group directly."""
    run = records.require(name)
    if run.terminal:
        echo(f"local run {name} already {run.state}")
        return run
    attempt = run.current
    pgid = attempt.pid if attempt and not attempt.finished_at else None
    if supervisor_alive(run):
        assert run.supervisor_pid is not None
        os.kill(run.supervisor_pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            run = records.require(name)
            if run.terminal:
                break
            time.sleep(POLL_SECONDS)
        else:
            raise RuntimeFailure(
                f"timed out after {timeout:.0f}s waiting for local run {name} to stop",
                hint=f"check `tau run status {name}`; the supervisor is pid {run.supervisor_pid}",
            )
    else:
        if pgid is not None:
            _kill_tree(pgid)
        run.state, run.reason, run.message = records.CANCELLED, "Cancelled", "cancelled by the user"
        run.finished_at = records.now()
        records.save(run)
    if pgid is not None and group_alive(pgid):
        _kill_tree(pgid)
    echo(f"local run {name} cancelled; no process of it remains")
    return run


def _kill_tree(pgid: int) -> None:
    kill_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    kill_group(pgid, signal.SIGKILL)

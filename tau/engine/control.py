"""Cancel a local run (its whole process tree) from any terminal."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from tau.engine import procgroup, records
from tau.engine.records import LocalRun
from tau.engine.status import supervisor_alive
from tau.engine.supervise import GRACE_SECONDS
from tau.errors import RuntimeFailure

POLL_SECONDS = 0.1


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
            procgroup.kill_tree(pgid, GRACE_SECONDS)
        if attempt is not None and attempt.ray_pgid:
            procgroup.kill_tree(attempt.ray_pgid, GRACE_SECONDS)
        run.state, run.reason, run.message = records.CANCELLED, "Cancelled", "cancelled by the user"
        run.finished_at = records.now()
        records.save(run)
    if pgid is not None and procgroup.alive(pgid):
        procgroup.kill_tree(pgid, GRACE_SECONDS)
    echo(f"local run {name} cancelled; no process of it remains")
    return run

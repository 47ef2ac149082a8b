"""Cancel a local run (its whole process tree) from any terminal.

Nothing is signalled on the record's word alone: the supervising tau and each process group
must still be the processes the engine started (same start stamp, same group). A record
whose processes are gone, or whose pids now belong to someone else, is reported as stale
and closed without a single signal.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

from tau.engine import procgroup, records
from tau.engine.records import Attempt, LocalRun
from tau.engine.status import supervisor_alive
from tau.engine.supervise import GRACE_SECONDS
from tau.errors import RuntimeFailure

POLL_SECONDS = 0.1
OWNER = "researcher: this machine's local run state"


def cancel(
    name: str, *, echo: Callable[[str], None], timeout: float = GRACE_SECONDS + 20
) -> LocalRun:
    """Ask the supervising tau to cancel; if it is gone, kill the process groups directly."""
    run = records.require(name)
    if run.terminal:
        echo(f"local run {name} already {run.state}")
        return run
    groups = _groups(run.current)
    _refuse_unverifiable(run, groups)
    if supervisor_alive(run):
        assert run.supervisor_pid is not None
        os.kill(run.supervisor_pid, signal.SIGTERM)
        run = _wait_terminal(name, timeout)
    elif not any(procgroup.ours(pgid, stamp) for pgid, stamp in groups):
        shown = ", ".join(str(pgid) for pgid, _ in groups) or "none"
        run.state, run.reason = records.CANCELLED, "Stale"
        run.message = f"no process of this run was left (process groups {shown}); nothing signalled"
        run.finished_at = records.now()
        records.save(run)
        echo(
            f"local run {name} was not running: its supervisor and processes are gone "
            f"(recorded process groups: {shown}; such a pid may now be another process); "
            "nothing was signalled"
        )
        return run
    else:
        _kill(groups)
        run.state, run.reason, run.message = records.CANCELLED, "Cancelled", "cancelled by the user"
        run.finished_at = records.now()
        records.save(run)
    _kill(groups)
    echo(f"local run {name} cancelled; no process of it remains")
    return run


def _groups(attempt: Attempt | None) -> list[tuple[int, str]]:
    """The live attempt's process groups (its target's, a local Ray runtime's) and stamps."""
    if attempt is None or attempt.finished_at:
        return []
    found = [(attempt.pid, attempt.pid_stamp), (attempt.ray_pgid, attempt.ray_stamp)]
    return [(pgid, stamp) for pgid, stamp in found if pgid is not None]


def _refuse_unverifiable(run: LocalRun, groups: list[tuple[int, str]]) -> None:
    """A record written without start stamps names pids tau cannot tell from reused ones."""
    supervisor = run.supervisor_pid
    pids = (
        [supervisor]
        if supervisor and not run.supervisor_stamp and procgroup.start_stamp(supervisor)
        else []
    )
    pids += [pgid for pgid, stamp in groups if not stamp and procgroup.alive(pgid)]
    if pids:
        raise RuntimeFailure(
            f"local run {run.name} was recorded without process start times, so tau cannot "
            f"verify that pid {pids[0]} still belongs to it; nothing was signalled",
            hint=f"check `ps -o pid,lstart,args -p {pids[0]}` and stop it by hand if it is",
            owner=OWNER,
        )


def _kill(groups: list[tuple[int, str]]) -> None:
    for pgid, stamp in groups:
        if procgroup.ours(pgid, stamp):

            def still_ours(p: int = pgid, s: str = stamp) -> bool:
                return bool(procgroup.ours(p, s))

            procgroup.kill_tree(pgid, GRACE_SECONDS, still_ours=still_ours)


def _wait_terminal(name: str, timeout: float) -> LocalRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = records.require(name)
        if run.terminal:
            return run
        time.sleep(POLL_SECONDS)
    run = records.require(name)
    raise RuntimeFailure(
        f"timed out after {timeout:.0f}s waiting for local run {name} to stop",
        hint=f"check `tau run status {name}`; the supervisor is pid {run.supervisor_pid}",
    )

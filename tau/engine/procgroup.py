"""Process groups: a run attempt, and a local Ray runtime, each live in one.

A record outlives its processes, and pids are reused: a record saying "pid 4242" may, a day
later, name somebody's editor. Every pid the engine records therefore carries the process's
start stamp, and nothing is signalled unless the live process still has it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

POLL_SECONDS = 0.1
_PROC = Path("/proc")


def send(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_stamp(pid: int) -> str:
    """When process `pid` started, as an opaque comparable string ("" if it is gone).

    Linux: boot id plus the start time in clock ticks from /proc (exact, survives nothing
    but the process); elsewhere `ps -o lstart=` (to the second).
    """
    stat = _PROC / str(pid) / "stat"
    if _PROC.is_dir():
        try:
            text = stat.read_text()
            boot = (_PROC / "sys/kernel/random/boot_id").read_text().strip()
        except OSError:
            return ""
        fields = text.rpartition(")")[2].split()
        return f"{boot}:{fields[19]}" if len(fields) > 19 else ""
    try:
        done = subprocess.run(
            ["ps", "-o", "lstart=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None


def same_process(pid: int | None, stamp: str) -> bool | None:
    """True: `pid` is still the process recorded with `stamp`; False: it is gone or another
    process now; None: the record has no stamp, so identity cannot be verified."""
    if pid is None:
        return False
    if not stamp:
        return None
    return start_stamp(pid) == stamp


def ours(pgid: int | None, stamp: str) -> bool | None:
    """Whether process group `pgid` is still the one the engine created (leader `stamp`).

    While the leader lives it must have the recorded stamp and still lead the group. Once
    it exited, a group id stays reserved as long as any member lives (the kernel never hands
    it to a new process), so a live group without its leader is still ours.
    """
    if pgid is None:
        return False
    if not stamp:
        return None
    now = start_stamp(pgid)
    if now:
        return now == stamp and group_of(pgid) == pgid
    return alive(pgid)


def kill_tree(pgid: int, grace: float, *, still_ours: Callable[[], bool] = lambda: True) -> None:
    """SIGTERM, up to `grace` seconds to exit, then SIGKILL for whatever is left.

    `still_ours` is asked again before the SIGKILL: the group may have exited during the
    grace period and its id been reused.
    """
    send(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while alive(pgid) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    if alive(pgid) and still_ours():
        send(pgid, signal.SIGKILL)

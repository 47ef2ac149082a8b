"""Process groups: a run attempt, and a local Ray runtime, each live in one."""

from __future__ import annotations

import contextlib
import os
import signal
import time

POLL_SECONDS = 0.1


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


def kill_tree(pgid: int, grace: float) -> None:
    """SIGTERM, up to `grace` seconds to exit, then SIGKILL for whatever is left."""
    send(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while alive(pgid) and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
    send(pgid, signal.SIGKILL)

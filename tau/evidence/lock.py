"""The store's exclusive advisory lock: one mutation at a time, across processes.

A writer that cannot get the lock within the bounded wait fails with a conflict instead of
hanging, so a stuck importer never wedges every other command.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from tau.evidence.errors import StoreConflict

LOCK_NAME = ".tau-exp.lock"
POLL_SECONDS = 0.25
WAIT_SECONDS = 10.0


def store_lock(path: Path) -> FileLock:
    """An OS advisory lock (flock) on `path`; the file stays, and there is no soft fallback
    whose stale lock file would outlive a crashed writer."""
    return FileLock(path, mode=0o644, preserve_lock_file=True, fallback_to_soft=False)


@contextlib.contextmanager
def exclusive(root: Path, wait: float = WAIT_SECONDS) -> Iterator[None]:
    lock = store_lock(root / LOCK_NAME)
    try:
        lock.acquire(timeout=wait, poll_interval=POLL_SECONDS)
    except Timeout:
        raise StoreConflict(
            f"experiment store {root} is locked by another writer "
            f"(waited {wait:g}s for {LOCK_NAME})",
            hint="retry when the other import or track finishes",
        ) from None
    try:
        yield
    finally:
        lock.release()

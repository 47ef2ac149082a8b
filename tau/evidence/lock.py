"""The store's exclusive advisory lock: one mutation at a time, across processes.

A writer that cannot get the lock within the bounded wait fails with a conflict instead of
hanging, so a stuck importer never wedges every other command.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from tau.evidence.errors import StoreConflict

LOCK_NAME = ".tau-exp.lock"
POLL_SECONDS = 0.25
WAIT_SECONDS = 10.0


@contextlib.contextmanager
def exclusive(root: Path, wait: float = WAIT_SECONDS) -> Iterator[None]:
    path = root / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreConflict(
                        f"experiment store {root} is locked by another writer "
                        f"(waited {wait:g}s for {LOCK_NAME})",
                        hint="retry when the other import or track finishes",
                    ) from None
                time.sleep(POLL_SECONDS)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)

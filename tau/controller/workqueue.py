"""A per-object work queue with delays: the controller-runtime model on asyncio.

Watch events and requeues add keys; a key is never processed by two workers at once, and a
key added while it is being processed runs again afterwards. Failures back off per key.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any

log = logging.getLogger(__name__)

BACKOFF_START = 1.0
BACKOFF_MAX = 60.0

Key = Hashable


class WorkQueue:
    def __init__(self) -> None:
        self._due: dict[Key, float] = {}
        self._active: set[Key] = set()
        self._failures: Counter[Key] = Counter()
        self._wake = asyncio.Event()
        self.stats: Counter[str] = Counter()

    def add(self, key: Key, delay: float = 0.0) -> None:
        due = time.monotonic() + max(delay, 0.0)
        self._due[key] = min(self._due.get(key, due), due)
        self._wake.set()

    def pending(self) -> int:
        return len(self._due)

    async def get(self) -> Key:
        while True:
            now = time.monotonic()
            ready = [(due, repr(k)) for k, due in self._due.items() if k not in self._active]
            if ready:
                due = min(ready)[0]
                if due <= now:
                    key = next(
                        k for k, d in self._due.items() if d == due and k not in self._active
                    )
                    del self._due[key]
                    self._active.add(key)
                    return key
                timeout = due - now
            else:
                timeout = None
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)

    def done(self, key: Key, requeue_after: float | None, failed: bool) -> None:
        self._active.discard(key)
        if failed:
            self._failures[key] += 1
            delay = min(BACKOFF_START * 2 ** (self._failures[key] - 1), BACKOFF_MAX)
            self.add(key, delay)
        else:
            self._failures.pop(key, None)
            if requeue_after is not None:
                self.add(key, requeue_after)
        self._wake.set()


async def worker(queue: WorkQueue, handlers: dict[str, Callable[..., float | None]]) -> None:
    """Process keys `(kind, *args)` forever by calling `handlers[kind](*args)` in a thread."""
    while True:
        key: Any = await queue.get()
        kind, *args = key
        failed, requeue = False, None
        try:
            requeue = await asyncio.to_thread(handlers[kind], *args)
            queue.stats[f"{kind}_reconciles"] += 1
        except Exception as error:
            failed = True
            queue.stats[f"{kind}_errors"] += 1
            log.warning("reconcile %s failed: %s", "/".join(map(str, key)), _one_line(error))
        queue.done(key, requeue, failed)


def _one_line(error: Exception) -> str:
    text = getattr(error, "message", None) or str(error) or type(error).__name__
    return text.splitlines()[0]

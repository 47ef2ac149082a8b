"""`tau logs NAME [-f] [--tail N]` for local runs: the attempts' log files.

Like `kubectl logs` on the run's current pod: the latest attempt by default; following
continues into the next attempt when a retry starts and ends when the run is terminal.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from tau.engine import records
from tau.engine.status import effective_state

POLL_SECONDS = 0.2


def tail_lines(path: Path, count: int) -> tuple[list[str], int]:
    """The last `count` lines (-1 = all) and the byte offset after them."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    lines = data.decode(errors="replace").splitlines()
    if count >= 0:
        lines = list(deque(lines, maxlen=count)) if count else []
    return lines, len(data)


def stream(name: str, *, tail: int, follow: bool, out: Callable[[str], None]) -> None:
    run = records.require(name)
    while follow and run.current is None and effective_state(run)[0] not in records.TERMINAL:
        time.sleep(POLL_SECONDS)
        run = records.require(name)
    attempt = run.current
    if attempt is None:
        return
    lines, offset = tail_lines(Path(attempt.log), tail)
    for line in lines:
        out(line)
    if not follow:
        return
    number, pending = attempt.number, b""
    while True:
        run = records.require(name)
        with open(run.attempts[number - 1].log, "rb") as handle:
            handle.seek(offset)
            chunk = handle.read()
        offset += len(chunk)
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            out(line.decode(errors="replace"))
        if len(run.attempts) > number:
            if pending:
                out(pending.decode(errors="replace"))
            number, offset, pending = number + 1, 0, b""
            out(f"--- attempt {number} ---")
            continue
        state, _ = effective_state(run)
        if state in records.TERMINAL and not chunk:
            if pending:
                out(pending.decode(errors="replace"))
            return
        time.sleep(POLL_SECONDS)

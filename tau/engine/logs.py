"""`tau logs NAME [-f] [--tail N]` for local runs: the attempts' log files.

Like `kubectl logs` on the run's current pod: the latest attempt by default; following
continues into the next attempt when a retry starts and ends when the run is terminal.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from tau.engine import records
from tau.engine.records import LocalRun
from tau.engine.status import effective_state
from tau.errors import RuntimeFailure

POLL_SECONDS = 0.2


def log_path(run: LocalRun, number: int) -> Path:
    """Attempt `number`'s log, always in the run's own directory.

    The record's `log` field is informational: a record naming `/etc/shadow` (or a log that
    is a symlink out of the run directory) must not turn `tau logs` into a file reader.
    """
    directory = Path(os.path.realpath(run.directory))
    path = directory / f"attempt-{number}.log"
    resolved = Path(os.path.realpath(path))
    if resolved.parent != directory or (path.exists() and not resolved.is_file()):
        raise RuntimeFailure(
            f"{path} is not a log file inside the run's directory; it was not read",
            hint=f"delete {directory} to forget run {run.name}",
            owner="researcher: this machine's local run state",
        )
    return path


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
    lines, offset = tail_lines(log_path(run, attempt.number), tail)
    for line in lines:
        out(line)
    if not follow:
        return
    number, pending = attempt.number, b""
    while True:
        run = records.require(name)
        with open(log_path(run, number), "rb") as handle:
            handle.seek(offset)
            chunk = handle.read()
        offset += len(chunk)
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for raw in complete:
            out(raw.decode(errors="replace"))
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

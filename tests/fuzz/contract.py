"""The hostile-input contract every fuzz target asserts, and the in-process CLI runner.

Commands run in this process (through the same `tau.cli.main.run` the console scripts use)
so thousands of inputs fit in a test budget; each one is bounded in wall time by a SIGALRM
guard and in memory by the process's peak RSS.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click
from hypothesis import HealthCheck, settings

from tau.cli.main import run

EXAMPLES = int(os.environ.get("TAU_FUZZ_EXAMPLES", "0"))
SURVEY = os.environ.get("TAU_FUZZ_SURVEY", "")  # a file: record breaches, do not fail
settings.register_profile(
    "fuzz",
    deadline=None,  # `bounded` enforces the 5 s limit per input, counted as a hang
    database=None,  # nothing written into the checkout
    derandomize=not os.environ.get("TAU_FUZZ_RANDOM"),
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


# pytest-timeout per target: the default budget fits 15 minutes; a measurement run gets 3 s
# per input on top (the damaged-store target needs about 1.5 s each on a loaded machine).
TIMEOUT = max(900, 3 * EXAMPLES)


def budget(default: int) -> settings:
    """`default` examples, or TAU_FUZZ_EXAMPLES for a measurement run."""
    return settings(settings.get_profile("fuzz"), max_examples=EXAMPLES or default)


HANG_SECONDS = 5.0
MEMORY_LIMIT_KIB = 1_500_000  # peak RSS of the whole test process, pyarrow included

TALLY: dict[str, Counter[str]] = {}
_MEASURES = ("inputs", "internal errors", "hangs", "secrets echoed", "writes outside")


def tally(target: str) -> Counter[str]:
    return TALLY.setdefault(target, Counter({m: 0 for m in _MEASURES}))


class Hang(Exception):
    """An input kept a command busy past HANG_SECONDS."""


@contextlib.contextmanager
def bounded(seconds: float = HANG_SECONDS) -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise Hang(f"no answer within {seconds:.0f}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def environment(cwd: Path, **env: str) -> Iterator[None]:
    saved_env = {k: os.environ.get(k) for k in env}
    saved_cwd = os.getcwd()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    lines: list[str] = field(default_factory=list)


def invoke(group: click.Group, prog: str, args: list[str], cwd: Path, **env: str) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with (
        environment(cwd, **env),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        bounded(),
    ):
        code = run(group, prog, args)
    return Outcome(code, out.getvalue(), err.getvalue(), time.monotonic() - started)


def tau(args: list[str], cwd: Path, **env: str) -> Outcome:
    from tau.cli.main import cli

    return invoke(cli, "tau", args, cwd, **env)


def portal(args: list[str], cwd: Path, **env: str) -> Outcome:
    from tau.portal.cli.main import cli

    return invoke(cli, "taugrid-portal", args, cwd, **env)


def snapshot(root: Path, *, ignore: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every file under `root` with its bytes (SQLite's shared-memory index, an empty WAL and
    paths under `ignore` excluded)."""
    found = {}
    for path in root.rglob("*"):
        if path.name.endswith("-shm") or path.is_dir() or path.is_symlink():
            continue
        if str(path.relative_to(root)).startswith(ignore):
            continue
        with contextlib.suppress(OSError):
            found[str(path.relative_to(root))] = path.read_bytes()
    return {k: v for k, v in found.items() if not (k.endswith("-wal") and not v)}


def _fragment(secret: str) -> str:
    """The planted marker plus what follows: enough to prove a (partial) echo."""
    from tests.fuzz.hostile import MARK

    start = secret.find(MARK)
    return secret[start : start + 12] if start >= 0 else secret


def check(
    target: str,
    outcome: Outcome,
    *,
    codes: tuple[int, ...],
    secrets: tuple[str, ...] = (),
    outside_before: dict[str, bytes] | None = None,
    outside: Path | None = None,
    ignore: tuple[str, ...] = (),
    names: tuple[str, ...] = (),
) -> None:
    """Assert the contract on one outcome, counting each kind of breach for the report."""
    counts = tally(target)
    counts["inputs"] += 1
    shown = outcome.stdout + outcome.stderr
    breaches = []
    if "internal error" in outcome.stderr or "Traceback" in shown:
        counts["internal errors"] += 1
        breaches.append("internal error")
    if outcome.seconds > HANG_SECONDS:
        counts["hangs"] += 1
        breaches.append(f"took {outcome.seconds:.1f}s")
    leaked = [s for s in secrets if s in shown or _fragment(s) in shown]
    if leaked:
        counts["secrets echoed"] += 1
        breaches.append("a secret was printed")
    if outside is not None and snapshot(outside, ignore=ignore) != (outside_before or {}):
        counts["writes outside"] += 1
        breaches.append(f"files changed under {outside}")
    if any(char in shown for char in "\x00\x1b\x9b\r\u202e") or "\n\n" in outcome.stderr:
        breaches.append("a raw control character reached the terminal")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if peak > MEMORY_LIMIT_KIB:
        breaches.append(f"peak memory {peak} KiB")
    if outcome.code not in codes:
        breaches.append(f"exit {outcome.code}, expected one of {codes}")
    if outcome.code != 0:
        errors = [line for line in outcome.stderr.splitlines() if line.startswith("error: ")]
        others = [
            line
            for line in outcome.stderr.splitlines()
            if not line.startswith(("error: ", "  - ", "warning: "))
        ]
        if len(errors) != 1 or others:
            breaches.append("not exactly one error line")
        elif names and not any(name in errors[0] for name in names):
            breaches.append(f"the error names none of {names}")
    report = f"{'; '.join(breaches)}\nstdout: {outcome.stdout[:500]!r}\n" + (
        f"stderr: {outcome.stderr[:500]!r}"
    )
    if breaches and SURVEY:
        # Measurement mode: count every breach over the whole budget instead of stopping.
        with open(SURVEY, "a", encoding="utf-8") as log:
            log.write(json.dumps({"target": target, "breaches": breaches, "report": report}) + "\n")
        return
    assert not breaches, report

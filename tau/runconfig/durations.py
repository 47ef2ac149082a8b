"""Go-style duration strings (`30s`, `1m30s`, `1.5h`), the format resilience and profiler use.

The original contract stores durations as Go `time.Duration` strings, so configs written for
it must keep parsing; we accept exactly that grammar and nothing looser.
"""

from __future__ import annotations

import math
import re

_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds for a Go duration string; ValueError when it does not parse."""
    if not isinstance(text, str):
        raise ValueError("not a string")
    body = text
    sign = 1.0
    if body[:1] in "+-" and body:
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return 0.0
    if not body:
        raise ValueError(f"invalid duration {text!r}")
    total = 0.0
    position = 0
    for match in _PART.finditer(body):
        if match.start() != position:
            raise ValueError(f"invalid duration {text!r}")
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if position != len(body) or not math.isfinite(total):
        raise ValueError(f"invalid duration {text!r}")
    return sign * total


def format_duration(seconds: float) -> str:
    """The Go `Duration.String()` form (`90` -> `1m30s`, `1.5` -> `1.5s`, `0.25` -> `250ms`),
    which annotations carry so they read the same as the original contract's."""
    nanos = round(abs(seconds) * 1e9)
    sign = "-" if seconds < 0 and nanos else ""
    if nanos == 0:
        return "0s"
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return sign + _decimal(nanos, size) + unit
    hours, rest = divmod(nanos, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = f"{hours}h" if hours else ""
    if hours or minutes:
        text += f"{minutes}m"
    return sign + text + _decimal(rest, 1_000_000_000) + "s"


def _decimal(value: int, unit: int) -> str:
    whole, fraction = divmod(value, unit)
    if not fraction:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{fraction:0{digits}d}".rstrip("0")

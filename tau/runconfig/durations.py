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
    """The Go `Duration.String()` form for whole seconds (`90` -> `1m30s`)."""
    whole = round(seconds)
    if whole == 0:
        return "0s"
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    text = ""
    if hours:
        text += f"{hours}h"
    if hours or minutes:
        text += f"{minutes}m"
    return text + f"{secs}s"

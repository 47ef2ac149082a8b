"""What a run waiting for Kueue is from tau.jsontypes import JSONObject
short of, how long it has waited and who is ahead of it.

Kueue says why a workload is not admitted in one long sentence per flavor it tried; cut to a
line width, the useful part ("48 more needed") is lost. Each flavor's clause is read back
into a row: resource, what the run asks for, what the flavor can give, how much is missing.
Kueue has written two shapes of it (older: "insufficient unused quota for cpu in flavor f,
8 more needed"; newer: "... previously considered podsets requests (0) + current podset
request (64) > maximum capacity (16)"); both are read, and anything else is kept verbatim.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from tau.jsontypes import JSONObject

_MORE_NEEDED = re.compile(
    r"insufficient (?:unused )?quota for (?P<resource>\S+) in flavor (?P<flavor>[^,\s]+), "
    r"(?P<needed>\S+) more needed"
)
_OVER_CAPACITY = re.compile(
    r"insufficient (?:unused )?quota for (?P<resource>\S+) in flavor (?P<flavor>[^,\s]+), "
    r"previously considered podsets requests \((?P<previous>[^)]*)\) \+ current podset "
    r"request \((?P<requested>[^)]*)\) > maximum capacity \((?P<capacity>[^)]*)\)"
)
_SUFFIXES = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
}  # fmt: skip


def _split(quantity: str) -> tuple[float, str] | None:
    for suffix in sorted(_SUFFIXES, key=len, reverse=True):
        if quantity.endswith(suffix):
            number, unit = quantity[: -len(suffix)], suffix
            break
    else:
        number, unit = quantity, ""
    try:
        return float(number), unit
    except ValueError:
        return None


def _difference(total: str, capacity: str) -> str:
    """`total - capacity`, in their unit when they share one; "" when nothing is missing."""
    a, b = _split(total), _split(capacity)
    if a is None or b is None:
        return ""
    (x, unit_a), (y, unit_b) = a, b
    if unit_a == unit_b or y == 0:
        missing, unit = x - y, unit_a
    else:  # Kueue writes 1000 CPUs as "1k" beside a capacity of "32": compare plain amounts
        missing, unit = x * _SUFFIXES.get(unit_a, 1) - y * _SUFFIXES.get(unit_b, 1), ""
    return f"{missing:g}{unit}" if missing > 0 else ""


def shortfalls(message: str) -> list[dict[str, str]]:
    """One row per flavor clause of Kueue's message: flavor, resource, needed (and, in the
    newer shape, requested and capacity)."""
    rows = []
    for match in _OVER_CAPACITY.finditer(message):
        previous, requested = match["previous"].strip(), match["requested"].strip()
        total = requested
        if previous not in ("", "0"):
            a, b = _split(previous), _split(requested)
            if a and b and a[1] == b[1]:
                total = f"{a[0] + b[0]:g}{a[1]}"
        rows.append(
            {
                "flavor": match["flavor"],
                "resource": match["resource"],
                "requested": total,
                "capacity": match["capacity"].strip(),
                "needed": _difference(total, match["capacity"].strip()),
            }
        )
    for match in _MORE_NEEDED.finditer(message):
        rows.append(
            {
                "flavor": match["flavor"],
                "resource": match["resource"],
                "requested": "",
                "capacity": "",
                "needed": match["needed"],
            }
        )
    return rows


def describe(row: dict[str, str]) -> str:
    """`flavor f: nvidia.com/gpu 64 requested, capacity 16, 48 more needed`."""
    parts = []
    if row["requested"]:
        parts.append(f"{row['requested']} requested, capacity {row['capacity']}")
    if row["needed"]:
        parts.append(f"{row['needed']} more needed")
    return f"flavor {row['flavor']}: {row['resource']} " + ", ".join(parts or ["short"])


def waited(since: str, now: datetime | None = None) -> str:
    """How long since `since` (an RFC 3339 time), as 1h2m3s / 4m5s / 6s; "" if unknown."""
    try:
        start = datetime.fromisoformat(since.replace("Z", "+00:00"))
    except ValueError:
        return ""
    seconds = int(((now or datetime.now(UTC)) - start).total_seconds())
    if seconds < 0:
        return ""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def ahead_of(pending: list[JSONObject], name: str) -> list[JSONObject]:
    """The workloads Kueue ranks before `name` in its LocalQueue (visibility API items)."""
    mine = next((p for p in pending if (p.get("metadata") or {}).get("name") == name), None)
    if mine is None:
        return []
    position = int(mine.get("positionInLocalQueue") or 0)
    before = [
        p
        for p in pending
        if int(p.get("positionInLocalQueue") or 0) < position
        and (p.get("metadata") or {}).get("name") != name
    ]
    return [
        {
            "name": str((p.get("metadata") or {}).get("name") or ""),
            "priority": int(p.get("priority") or 0),
            "position": int(p.get("positionInLocalQueue") or 0),
        }
        for p in sorted(before, key=lambda p: int(p.get("positionInLocalQueue") or 0))
    ]

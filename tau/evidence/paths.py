"""Store-relative paths: every file the store reads or writes stays inside its root.

Paths are built from identifiers (validated by `ids`) and read back from `index.sqlite`; a
tampered catalogue or a missed identifier check must still never reach outside the store.
"""

from __future__ import annotations

import os
from pathlib import Path

from tau.evidence.errors import StoreCorrupt


def inside(root: Path, rel: str) -> Path:
    """`root/rel`, refused unless it resolves (symlinks included) to a path under `root`."""
    base = Path(os.path.realpath(root))
    target = Path(os.path.realpath(base / rel))
    if rel.startswith("/") or "\x00" in rel or not target.is_relative_to(base):
        shown = rel[:120].encode("ascii", "backslashreplace").decode()
        raise StoreCorrupt(
            f"{root}: path {shown!r} points outside the store; nothing was read or written",
            hint="restore index.sqlite from a copy (taugrid-portal experiment export)",
            owner="the store's owner",
        )
    return target

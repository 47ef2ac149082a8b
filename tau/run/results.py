"""Which result paths `tau run get --artifact` may name, on either engine.

The same refusal on a cluster and locally: a relative, clean path that stays inside the
run's results, checked before anything is read.
"""

from __future__ import annotations

import posixpath

from tau.errors import UsageError


def inside(root: str, relative: str) -> str:
    """`root/relative`, refusing absolute, unclean or escaping paths."""
    if not relative or relative.startswith("/"):
        raise UsageError(f"--artifact must be a relative path inside the results; got {relative!r}")
    clean = posixpath.normpath(relative)
    if clean != relative.rstrip("/") or clean == ".." or clean.startswith("../"):
        raise UsageError(
            f"--artifact {relative!r} is not a clean path inside the results (no '..', no "
            "'.' segments)"
        )
    return posixpath.join(root, clean)

"""`tau run get NAME` for local runs: the output directory, its staged publication, one file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tau.engine.records import LocalRun
from tau.errors import RuntimeFailure, UsageError


@dataclass(frozen=True)
class Listing:
    path: Path
    entries: list[str]
    published: bool | None  # None: not a staged run


def listing(run: LocalRun) -> Listing:
    root = Path(run.output_dir)
    if not root.is_dir():
        raise RuntimeFailure(
            f"local run {run.name} has no output directory yet ({root})",
            hint=f"check `tau run status {run.name}`",
        )
    published = None
    if run.publication_id:
        from tau.evidence.publish import completed_publications

        published = any(
            p.publication_id == run.publication_id for p in completed_publications(root)
        )
    entries = sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir())
    return Listing(root, entries, published)


def artifact(run: LocalRun, relative: str) -> Path:
    """One file inside the output directory; the cluster's path rules (no escapes) apply."""
    from tau.run.results import inside

    root = Path(run.output_dir).resolve()
    path = Path(inside(str(root), relative)).resolve()
    if not path.is_relative_to(root):  # a symlink out of the output directory
        raise UsageError(f"--artifact {relative!r} escapes the output directory {root}")
    if not path.is_file():
        raise RuntimeFailure(
            f"{relative} is not a file in {root}",
            hint=f"list outputs with `tau run get {run.name}`",
        )
    return path

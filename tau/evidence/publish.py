"""Staged output publishing: outputs appear in the durable directory only as a complete set.

The run writes into `TAU_OUTPUT_STAGING_DIR`; after it exits 0 each top-level regular file is
copied (checksummed before and after) into `<TAU_OUTPUT_DIR>/.tau-artifacts/<publication>/`
without clobbering, and the `.tau-artifacts-complete` marker is written last. Readers list
only publications whose marker exists.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from tau.errors import RuntimeFailure, ValidationError
from tau.evidence import atomic

PUBLICATIONS_DIR = ".tau-artifacts"
COMPLETE_MARKER = ".tau-artifacts-complete"
RESERVED_PREFIXES = (".tau", COMPLETE_MARKER)


class PublishRefused(RuntimeFailure):
    """The staged set cannot be published without losing or overwriting evidence."""


@dataclass(frozen=True)
class Publication:
    publication_id: str
    path: Path
    files: tuple[str, ...]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _check_publication_id(publication_id: str) -> None:
    if not publication_id or "/" in publication_id or publication_id in (".", ".."):
        raise ValidationError(
            f"publication id {publication_id!r} must be a single path segment",
            owner="the run's configuration",
        )


def publish_staged(staging_dir: Path, output_dir: Path, publication_id: str) -> Publication:
    """Publish every top-level file of `staging_dir`; idempotent for identical content."""
    _check_publication_id(publication_id)
    entries = sorted(staging_dir.iterdir()) if staging_dir.is_dir() else []
    problems = []
    for entry in entries:
        if entry.name.startswith(RESERVED_PREFIXES):
            problems.append(f"{entry.name}: reserved name")
        elif entry.is_symlink():
            problems.append(f"{entry.name}: symlinks are not published")
        elif not entry.is_file():
            problems.append(f"{entry.name}: only top-level regular files are published")
    if problems:
        raise PublishRefused(
            f"staged outputs in {staging_dir} cannot be published: {'; '.join(problems)}",
            owner="the training code writing the staging dir",
        )
    target_dir = output_dir / PUBLICATIONS_DIR / publication_id
    target_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for entry in entries:
        before = _sha256(entry)
        final = target_dir / entry.name
        if final.exists():
            if _sha256(final) != before:
                raise PublishRefused(
                    f"{final} already exists with different content; refusing to overwrite",
                    owner="the run that published it first",
                )
            names.append(entry.name)
            continue
        temp = target_dir / f".tau-publish-{entry.name}.{os.getpid()}"
        with open(entry, "rb") as reader, open(temp, "wb") as writer:
            shutil.copyfileobj(reader, writer, 1 << 20)
            writer.flush()
            os.fsync(writer.fileno())
        if not (_sha256(entry) == before == _sha256(temp)):
            temp.unlink(missing_ok=True)
            raise PublishRefused(
                f"{entry} changed while it was being published", owner="the training code"
            )
        try:
            os.link(temp, final)  # no-clobber: fails if another publisher got there first
        except FileExistsError:
            if _sha256(final) != before:
                raise PublishRefused(
                    f"{final} appeared with different content; refusing to overwrite",
                    owner="the concurrent publisher",
                ) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
        names.append(entry.name)
    atomic.write_text(target_dir / COMPLETE_MARKER, f"complete {publication_id}\n")
    return Publication(publication_id, target_dir, tuple(names))


def completed_publications(output_dir: Path) -> list[Publication]:
    """Only publications whose completion marker exists; partial sets are invisible."""
    root = output_dir / PUBLICATIONS_DIR
    found = []
    for directory in sorted(root.iterdir()) if root.is_dir() else []:
        if not (directory / COMPLETE_MARKER).is_file():
            continue
        files = tuple(
            sorted(
                p.name
                for p in directory.iterdir()
                if p.is_file() and not p.name.startswith(RESERVED_PREFIXES)
            )
        )
        found.append(Publication(directory.name, directory, files))
    return found

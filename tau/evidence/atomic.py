"""Whole-file writes for the store, on top of `tau.atomicfile`.

Every durable file of the store (manifest, Parquet metric files, copied artifacts, exports)
goes through here so a crash leaves either the old file or the new one; the store also
creates missing partition directories on the way.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from tau import atomicfile


@contextlib.contextmanager
def atomic_open(target: Path, mode: int = 0o644) -> Iterator[BinaryIO]:
    """Yield a binary file whose content replaces `target` only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomicfile.atomic_open(target, mode) as handle:
        yield handle


def write_bytes(target: Path, data: bytes, mode: int = 0o644) -> None:
    with atomic_open(target, mode) as handle:
        handle.write(data)


def write_text(target: Path, text: str, mode: int = 0o644) -> None:
    write_bytes(target, text.encode("utf-8"), mode)


def copy_file(source: Path, target: Path, mode: int = 0o644) -> None:
    with open(source, "rb") as reader, atomic_open(target, mode) as writer:
        shutil.copyfileobj(reader, writer, 1 << 20)

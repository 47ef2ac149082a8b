"""Whole-file writes that readers never see half-done, with the file mode set from the start.

The bytes land in a dotfile next to the target (created 0600, then given `mode` before any
byte is written, so a secret is never readable by others even for a moment), are fsynced,
renamed over the target, and the directory entry is fsynced: a crash leaves either the old
file or the new one. The caller owns the parent directory (its mode differs per use).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def _fchmod(fd: int, mode: int) -> None:
    try:
        os.fchmod(fd, mode)
    except OSError as error:  # some network file systems refuse chmod; mkstemp's 0600 stays
        if error.errno not in (errno.EPERM, errno.ENOTSUP):
            raise


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_open(target: Path, mode: int = 0o644) -> Iterator[BinaryIO]:
    """A binary file whose content replaces `target` only if the block succeeds."""
    target = Path(target)
    directory = target.parent
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    try:
        _fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _fsync_dir(directory)


def write_bytes(target: Path, data: bytes, mode: int = 0o644) -> None:
    with atomic_open(target, mode) as handle:
        handle.write(data)


def write_text(target: Path, text: str, mode: int = 0o644) -> None:
    write_bytes(target, text.encode("utf-8"), mode)

"""Whole-file writes that readers never see half-done.

Every durable file of the store (manifest, Parquet metric files, copied artifacts, exports)
goes through here: the bytes land in a dotfile next to the target, are fsynced, and are
renamed over the target, so a crash leaves either the old file or the new one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def temp_path_for(target: Path) -> Path:
    return target.with_name(f".{target.name}.tmp-{secrets.token_hex(6)}")


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


def _chmod(path: Path, mode: int) -> None:
    try:
        os.chmod(path, mode)
    except OSError as error:  # some network file systems refuse chmod; the bytes still count
        if error.errno not in (errno.EPERM, errno.ENOTSUP):
            raise


@contextlib.contextmanager
def atomic_open(target: Path, mode: int = 0o644) -> Iterator[BinaryIO]:
    """Yield a binary file whose content replaces `target` only if the block succeeds."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path_for(target)
    handle = open(temp, "xb")  # noqa: SIM115 - closed below on every path
    try:
        yield handle
        handle.flush()
        _chmod(temp, mode)
        os.fsync(handle.fileno())
        handle.close()
        os.replace(temp, target)
        _fsync_dir(target.parent)
    except BaseException:
        handle.close()
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise


def write_bytes(target: Path, data: bytes, mode: int = 0o644) -> None:
    with atomic_open(target, mode) as handle:
        handle.write(data)


def write_text(target: Path, text: str, mode: int = 0o644) -> None:
    write_bytes(target, text.encode("utf-8"), mode)


def copy_file(source: Path, target: Path, mode: int = 0o644) -> None:
    with open(source, "rb") as reader, atomic_open(target, mode) as writer:
        shutil.copyfileobj(reader, writer, 1 << 20)

"""The data root a registry reads and writes: the few file operations every verb is made of.

Registry verbs are pure functions over a `Root`. `DirectoryRoot` is a directory on this
machine (a `file://` registry, the local engine's data root, tests); the workspace PVC is
reached through `tau.data.podroot.PodRoot`, which offers the same operations through
short-lived helper pods. Paths are POSIX and relative to the data root.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from filelock import FileLock

# `put(expect=ANY)` overwrites unconditionally; `expect=None` requires the file to be absent.
ANY = object()


class Exists(Exception):
    """`create` found the file already there (records are write-once)."""


class Conflict(Exception):
    """A compare-and-swap precondition failed: someone else moved the file."""


class Missing(Exception):
    """A directory to scan or copy from does not exist."""


@dataclass(frozen=True)
class FileStat:
    path: str  # relative to the scanned directory
    bytes: int
    sha256: str


@dataclass(frozen=True)
class Scope:
    """A part of the data root a verb reads: a directory, optionally only some file names
    down to a depth (run directories hold checkpoints; only their small records matter)."""

    path: str
    depth: int | None = None
    names: tuple[str, ...] = ()


class Root(Protocol):
    label: str

    def read(self, path: str) -> bytes | None: ...

    def listdir(self, path: str) -> list[str]: ...

    def create(self, path: str, data: bytes) -> None: ...

    def put(self, path: str, data: bytes, *, expect: object = ANY) -> None: ...

    def remove_tree(self, path: str) -> None: ...

    def scan(self, path: str) -> list[FileStat]: ...

    def copy(
        self, source: str, destination: str, files: list[str], on_file: Callable[[FileStat], None]
    ) -> None: ...

    def commit(self) -> None: ...


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class DirectoryRoot:
    """A data root that is a local directory; writes are atomic and CAS runs under a lock."""

    def __init__(self, directory: Path, label: str = "") -> None:
        self.directory = Path(directory)
        self.label = label or f"file://{self.directory}"

    def _path(self, path: str) -> Path:
        clean = posixpath.normpath(path)
        if clean.startswith("../") or clean == ".." or posixpath.isabs(clean):
            raise ValueError(f"path {path!r} leaves the data root")
        return self.directory / clean

    def read(self, path: str) -> bytes | None:
        try:
            return self._path(path).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(entry.name for entry in self._path(path).iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return []

    @contextlib.contextmanager
    def _locked(self, target: Path) -> Iterator[None]:
        target.parent.mkdir(parents=True, exist_ok=True)
        # flock through filelock, blocking: registry writes are short and must not be skipped.
        lock = FileLock(
            target.parent / ".tau-registry.lock", preserve_lock_file=True, fallback_to_soft=False
        )
        with lock:
            yield

    def create(self, path: str, data: bytes) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = _write_temp(target, data)
        try:
            os.link(temp, target)  # atomic and exclusive: fails if the record exists
        except FileExistsError:
            raise Exists(path) from None
        finally:
            temp.unlink(missing_ok=True)

    def put(self, path: str, data: bytes, *, expect: object = ANY) -> None:
        target = self._path(path)
        with self._locked(target):
            if expect is not ANY:
                current = self.read(path)
                if current != expect:
                    raise Conflict(path)
            temp = _write_temp(target, data)
            os.replace(temp, target)

    def remove_tree(self, path: str) -> None:
        target = self._path(path)
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)

    def scan(self, path: str) -> list[FileStat]:
        base = self._path(path)
        if not base.is_dir():
            raise Missing(path)
        return [
            FileStat(file.relative_to(base).as_posix(), file.stat().st_size, sha256_file(file))
            for file in sorted(base.rglob("*"))
            if file.is_file()
        ]

    def copy(
        self, source: str, destination: str, files: list[str], on_file: Callable[[FileStat], None]
    ) -> None:
        src, dst = self._path(source), self._path(destination)
        if not src.is_dir():
            raise Missing(source)
        for rel in files:
            origin, target = src / rel, dst / rel
            if not origin.is_file():
                raise Missing(posixpath.join(source, rel))
            target.parent.mkdir(parents=True, exist_ok=True)
            temp = target.with_name(f".{target.name}.tau-copy")
            shutil.copyfile(origin, temp)
            os.replace(temp, target)
            on_file(FileStat(rel, target.stat().st_size, sha256_file(target)))

    def commit(self) -> None:
        """Writes are already durable."""


def _write_temp(target: Path, data: bytes) -> Path:
    temp = target.with_name(f".{target.name}.{os.getpid()}.tau-tmp")
    with temp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return temp

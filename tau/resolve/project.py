"""`run.working_dir`: the researcher's project directory, packed to travel with the run.

The tree (minus version-control, cache and virtualenv clutter and `run.working_dir_excludes`)
becomes one deterministic zip — sorted entries under a single top-level `project/`
directory, fixed timestamps, normalised modes — so the same tree always yields the same
bytes, payload digest and config identity. It travels inside the workload object (no
ConfigMap, no image build), which is why both the input and the archive are capped.
"""

from __future__ import annotations

import fnmatch
import io
import os
import posixpath
import stat
import zipfile
from pathlib import Path

from tau.errors import ValidationError
from tau.render.intent import Project

RESEARCHER = "researcher: tau.yaml"
TOP = "project"
MAX_INPUT_BYTES = 8 << 20
# The archive rides in the 64 KiB payload beside the envelope's own overhead.
MAX_ARCHIVE_BYTES = 45 << 10
DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".tau",
    ".venv",
    "venv",
    ".tox",
    "__pycache__",
    "*.pyc",
    "*.pyo",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".ipynb_checkpoints",
    "node_modules",
    "*.egg-info",
    ".DS_Store",
)
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _excluded(relative: str, patterns: tuple[str, ...]) -> bool:
    name = posixpath.basename(relative)
    return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(relative, p) for p in patterns)


def _files(root: Path, patterns: tuple[str, ...]) -> list[tuple[str, Path]]:
    found: list[tuple[str, Path]] = []
    for directory, dirs, names in os.walk(root):
        base = Path(directory)
        rel_dir = base.relative_to(root).as_posix()
        dirs[:] = sorted(
            d
            for d in dirs
            if not _excluded(posixpath.join(rel_dir, d) if rel_dir != "." else d, patterns)
            and not (base / d).is_symlink()
        )
        for name in sorted(names):
            relative = posixpath.join(rel_dir, name) if rel_dir != "." else name
            path = base / name
            if _excluded(relative, patterns):
                continue
            if path.is_symlink():
                target = path.resolve()
                if not target.is_relative_to(root.resolve()) or not target.is_file():
                    raise ValidationError(
                        f"run.working_dir: {relative} is a symlink leaving the project "
                        "directory; only files inside it are shipped",
                        hint="copy the file in, or add it to run.working_dir_excludes",
                        owner=RESEARCHER,
                    )
            if path.is_file():
                found.append((relative, path))
    return sorted(found)


def package(
    config_dir: Path, working_dir: str, entrypoint: str, excludes: list[str] | None = None
) -> Project:
    """The packed project and the entrypoint's path inside it."""
    root = (config_dir / working_dir).resolve()
    if not root.is_dir():
        raise ValidationError(
            f"run.working_dir {working_dir!r} is not a directory (paths are relative to the "
            "run config)",
            owner=RESEARCHER,
        )
    entry = posixpath.relpath(
        posixpath.normpath(entrypoint), posixpath.normpath(working_dir or ".")
    )
    files = _files(root, DEFAULT_EXCLUDES + tuple(excludes or ()))
    total = sum(path.stat().st_size for _, path in files)
    if total > MAX_INPUT_BYTES:
        raise ValidationError(
            f"run.working_dir {working_dir!r} holds {total} bytes of files to ship; at most "
            f"{MAX_INPUT_BYTES} bytes travel with a run",
            hint="exclude data and outputs with run.working_dir_excludes, or put them on the PVC",
            owner=RESEARCHER,
        )
    if entry not in {relative for relative, _ in files}:
        raise ValidationError(
            f"entrypoint {entrypoint!r} is not shipped with run.working_dir {working_dir!r} "
            "(missing or excluded)",
            owner=RESEARCHER,
        )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for relative, path in files:
            info = zipfile.ZipInfo(f"{TOP}/{relative}", date_time=_EPOCH)
            executable = path.stat().st_mode & stat.S_IXUSR
            info.external_attr = ((0o755 if executable else 0o644) | stat.S_IFREG) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
    data = buffer.getvalue()
    if len(data) > MAX_ARCHIVE_BYTES:
        raise ValidationError(
            f"run.working_dir {working_dir!r} packs to {len(data)} bytes compressed; at most "
            f"{MAX_ARCHIVE_BYTES} bytes travel inside the workload object",
            hint="ship only code (run.working_dir_excludes), or bake large files into the image",
            owner=RESEARCHER,
        )
    return Project(archive=data, entrypoint=entry, files=len(files))

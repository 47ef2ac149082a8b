"""The checkpoint artifact index (`artifacts.json`): where a run's checkpoint durably lives.

A finished fine-tune copies its checkpoint from fast (hot) storage to durable storage and
records the result, so `tau serve deploy --from-finetune RUN` can find it later.
"""

from __future__ import annotations

import json
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from tau.errors import ValidationError
from tau.evidence import atomic

INDEX_NAME = "artifacts.json"
DEFAULT_CHECKPOINT = "last.safetensors"


def _safe_rel(rel: str) -> PurePosixPath:
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts:
        raise ValidationError(
            f"artifact path {rel!r} must be relative and stay inside the run's directory",
            owner="the run's configuration (storage.checkpoint)",
        )
    return path


def source_candidates(run: str, rel: str, hot_root: Path, durable_root: Path) -> list[Path]:
    """Where a checkpoint may have been written, in lookup order."""
    r = _safe_rel(rel)
    return [
        hot_root / r,
        hot_root / "finetunes" / run / r,
        durable_root / run / r,
        durable_root / "finetunes" / run / r,
        durable_root / "finetunes" / run / "artifacts" / r,
    ]


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def offload_checkpoint(
    run: str,
    *,
    namespace: str,
    hot_root: Path,
    durable_root: Path,
    rel: str = DEFAULT_CHECKPOINT,
    resource_name: str = "",
) -> dict[str, Any] | None:
    """Copy the checkpoint to durable storage and write the index; None if there is none."""
    source = next(
        (p for p in source_candidates(run, rel, hot_root, durable_root) if p.exists()), None
    )
    if source is None:
        return None
    run_dir = durable_root / "finetunes" / run
    dest = run_dir / "artifacts" / _safe_rel(rel)
    started = time.time()
    if source.resolve() != dest.resolve():
        if source.is_dir():
            temp = dest.with_name(f".{dest.name}.tmp-copy")
            shutil.rmtree(temp, ignore_errors=True)
            shutil.copytree(source, temp)
            shutil.rmtree(dest, ignore_errors=True)
            temp.rename(dest)
        else:
            atomic.copy_file(source, dest)
    completed = time.time()
    files = [p for p in dest.rglob("*") if p.is_file()] if dest.is_dir() else [dest]
    entry = {
        "name": "checkpoint",
        "manifest_path": str(rel),
        "source_path": str(source),
        "durable_path": str(dest),
        "status": "ready",
        "kind": "directory" if dest.is_dir() else "file",
        "size_bytes": sum(p.stat().st_size for p in files),
        "file_count": len(files),
        "mtime": _stamp(dest.stat().st_mtime),
        "upload_started_at": _stamp(started),
        "upload_completed_at": _stamp(completed),
        "upload_duration_ms": int((completed - started) * 1000),
    }
    index = {
        "schema_version": 1,
        "run": run,
        "namespace": namespace,
        "resource_name": resource_name or run,
        "created_at": _stamp(completed),
        "hot_root": str(hot_root),
        "durable_root": str(durable_root),
        "artifacts": [entry],
    }
    atomic.write_text(run_dir / INDEX_NAME, json.dumps(index, indent=2) + "\n")
    return index


def read_index(durable_root: Path, run: str) -> dict[str, Any] | None:
    path = durable_root / "finetunes" / run / INDEX_NAME
    return json.loads(path.read_text()) if path.is_file() else None

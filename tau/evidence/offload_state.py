"""The offloader's durable state: per-file offsets, the batch in flight, and the run's end.

`<out>/metrics_jsonl_checkpoint.json` (`tau.metrics.jsonl_checkpoint.v1`) is rewritten
atomically after every step. A batch is written to disk and named in `pending` *before* it
is imported, and offsets move only after the import committed; a sidecar killed anywhere in
between re-imports exactly the same bytes under the same idempotency key on restart, which
the store recognises and reuses, so no point is ever stored twice.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.errors import RuntimeFailure
from tau.evidence import atomic
from tau.evidence.cluster_runs import Completion
from tau.evidence.store import now

CHECKPOINT_FILE = "metrics_jsonl_checkpoint.json"
CHECKPOINT_SCHEMA = "tau.metrics.jsonl_checkpoint.v1"
HEAD_BYTES = 4096

SUCCEEDED = ("success", "successful", "succeeded", "complete", "completed", "done")
FAILED = ("fail", "failed", "failure", "error", "errored")
CANCELLED = ("cancel", "cancelled", "canceled")


@dataclass
class FileState:
    """How far one history file has been consumed, and how to recognise it again."""

    offset: int = 0
    line: int = 0
    size_bytes: int = 0
    mod_time: float = 0.0
    device: int = 0
    inode: int = 0
    head_sha256: str = ""
    head_length: int = 0
    updated_at: str = ""


@dataclass
class Segment:
    path: str
    start: int
    end: int
    start_line: int
    end_line: int
    sha256: str
    chunk: str
    scalars: int


@dataclass
class Checkpoint:
    run_id: str = ""
    files: dict[str, FileState] = field(default_factory=dict)
    pending: dict[str, Any] | None = None
    status: dict[str, Any] | None = None

    @property
    def pending_segments(self) -> list[Segment]:
        return [Segment(**s) for s in (self.pending or {}).get("segments", [])]


def checkpoint_path(out: Path) -> Path:
    return out / CHECKPOINT_FILE


def load_checkpoint(out: Path) -> Checkpoint | None:
    path = checkpoint_path(out)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        if data.get("schema_version") != CHECKPOINT_SCHEMA:
            raise ValueError(f"schema_version {data.get('schema_version')!r}")
        return Checkpoint(
            run_id=data.get("run_id", ""),
            files={p: FileState(**s) for p, s in data.get("files", {}).items()},
            pending=data.get("pending"),
            status=data.get("status"),
        )
    except (OSError, ValueError, TypeError) as error:
        raise RuntimeFailure(
            f"offload checkpoint {path} is unreadable ({error}); refusing to re-read history "
            "from the start, which would duplicate points",
            hint="restore the checkpoint, or remove it together with the run's offloaded points",
            owner="platform operator (metrics offload)",
        ) from None


def save_checkpoint(out: Path, checkpoint: Checkpoint) -> None:
    data = {
        "schema_version": CHECKPOINT_SCHEMA,
        "run_id": checkpoint.run_id,
        "files": {p: asdict(s) for p, s in sorted(checkpoint.files.items())},
        "pending": checkpoint.pending,
        "status": checkpoint.status,
        "updated_at": now(),
    }
    atomic.write_text(checkpoint_path(out), json.dumps(data, indent=1, sort_keys=True) + "\n")


def head_sha256(path: Path, length: int) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read(length)).hexdigest()


def locate_all(checkpoint: Checkpoint, found: list[tuple[Path, os.stat_result]]) -> None:
    """Match this step's files to their consumption state, surviving renames and rotation.

    A recorded state is taken over — by the same inode first (a rename), then by path — only
    if the file still starts with the bytes recorded for it and is not shorter than what was
    consumed; anything else (a replaced or truncated file, a reused inode) is new content and
    starts at byte 0. States of files that disappeared are kept, so a file moved out of the
    glob and back is not read twice.
    """
    by_inode = {(s.device, s.inode): key for key, s in checkpoint.files.items()}
    adopted: dict[str, FileState] = {}
    claimed: set[str] = set()
    for path, stat in found:
        key = str(path)
        state = None
        for candidate in (by_inode.get((stat.st_dev, stat.st_ino)), key):
            if not candidate:
                continue
            previous = checkpoint.files.get(candidate)
            if previous is None or candidate in claimed or not _continues(previous, path, stat):
                continue
            state = previous
            claimed.add(candidate)
            break
        if state is None:
            state = FileState()
        state.device, state.inode = stat.st_dev, stat.st_ino
        if state.head_length < min(stat.st_size, HEAD_BYTES):
            state.head_length = min(stat.st_size, HEAD_BYTES)
            state.head_sha256 = head_sha256(path, state.head_length)
        adopted[key] = state
    for key, state in checkpoint.files.items():
        if key not in claimed and key not in adopted:
            adopted.setdefault(key, state)
    checkpoint.files = adopted


def _continues(state: FileState, path: Path, stat: os.stat_result) -> bool:
    if stat.st_size < state.offset:
        return False
    if not state.head_length:
        return state.offset == 0
    return stat.st_size >= state.head_length and state.head_sha256 == head_sha256(
        path, state.head_length
    )


def read_completion(path: Path | None) -> Completion | None:
    """The completion file's report, or None while the run is still going.

    Empty means succeeded; a word is the state; a JSON object may add reason, message,
    artifact and checkpoint URIs and completed_at (default: the file's mtime).
    """
    if path is None or not path.is_file():
        return None
    text = path.read_text(errors="replace").strip()
    mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    fields: dict[str, Any] = {}
    if text.startswith("{"):
        try:
            fields = json.loads(text)
        except ValueError:
            fields = {"state": "failed", "message": f"unparsable completion file: {text[:80]}"}
        if not isinstance(fields, dict):
            fields = {"state": "failed", "message": "completion file is not a JSON object"}
    elif text:
        fields = {"state": text.split()[0]}
    state, note = normalise_state(str(fields.get("state") or "succeeded"))
    completed = mtime
    if fields.get("completed_at"):
        try:
            completed = datetime.fromisoformat(str(fields["completed_at"]).replace("Z", "+00:00"))
            if completed.tzinfo is None:
                completed = completed.replace(tzinfo=UTC)
        except ValueError:
            completed = mtime
    return Completion(
        state=state,
        reason=str(fields.get("reason") or ""),
        message=str(fields.get("message") or note),
        artifact_uri=str(fields.get("artifact_uri") or ""),
        checkpoint_uri=str(fields.get("checkpoint_uri") or ""),
        completed_at=completed,
    )


def normalise_state(word: str) -> tuple[str, str]:
    """(state, note): synonyms fold to succeeded/failed/cancelled; anything else is failed."""
    lowered = word.strip().lower()
    if lowered in SUCCEEDED:
        return "succeeded", ""
    if lowered in CANCELLED:
        return "cancelled", ""
    if lowered in FAILED:
        return "failed", ""
    return "failed", f"unrecognised completion state {word[:40]!r}"

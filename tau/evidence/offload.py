"""The metrics offloader: tail a run's JSONL history into the workspace store while it runs.

It runs beside the training container (`taugrid-portal experiment offload metrics`), on the
workspace PVC, and writes only through the store API (`record_attempt`, `import_jsonl`,
`settle`). Each step reads the complete (newline-terminated) lines appended since the last
checkpoint, validates them, and imports them as one batch; the final drain also takes a
trailing partial line. The handshake with the training container is three files: `ready`
(written once the offloader is recording), the completion file (written by the container's
wrapper when the workload exits) and `done` (written once the terminal `tau/run_status`
point is durable, so the pod may end).
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau.errors import TauError, ValidationError
from tau.evidence import atomic
from tau.evidence.cluster_runs import ClusterRun, Completion, record_attempt, settle
from tau.evidence.jsonl import ImportRequest, arrow_rows, import_jsonl
from tau.evidence.offload_state import (
    Checkpoint,
    FileState,
    Segment,
    load_checkpoint,
    locate_all,
    read_completion,
    save_checkpoint,
)
from tau.evidence.store import now

if TYPE_CHECKING:
    import pyarrow as pa

CHUNKS_DIR = "metrics-jsonl-chunks"
MAX_BATCH_BYTES = 64 << 20
# Largest `_timestamp` (epoch seconds) still inside calendar year 9999.
MAX_TIMESTAMP = 253402300800.0
SHUTDOWN_POLL_SECONDS = 0.2
PROTECTED_TAGS = ("tau_workspace", "tau_namespace", "tau_cluster", "tau_retry_attempt")


@dataclass
class OffloadConfig:
    store: Path
    out: Path
    history: tuple[str, ...]
    run: ClusterRun
    source: str = "stellar-online"
    tags: dict[str, str] = field(default_factory=dict)
    completion_file: Path | None = None
    ready_file: Path | None = None
    done_file: Path | None = None
    interval: float = 60.0
    baseline_existing_history: bool = False
    status_artifact_uri: str = ""
    status_checkpoint_uri: str = ""
    shutdown_wait: float = 120.0


class HistoryLineError(ValidationError):
    """One line of a history chunk breaks the contract; the chunk is not imported."""


@dataclass
class StepResult:
    points: int = 0
    lines: int = 0
    files: int = 0
    errors: list[str] = field(default_factory=list)


class Offloader:
    def __init__(self, config: OffloadConfig, *, say: Callable[[str], None] = lambda _: None):
        self.config = config
        self.say = say
        self.checkpoint = Checkpoint()
        self.reported: set[str] = set()
        self.points = 0
        # Arrow tables of the chunks validated this step, handed to the import by chunk path.
        self.parsed: dict[str, pa.Table] = {}

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> str:
        """Record the attempt (or find it again after a restart) and load the checkpoint."""
        cfg = self.config
        cfg.out.mkdir(parents=True, exist_ok=True)
        existing = load_checkpoint(cfg.out)
        attempt = record_attempt(cfg.store, cfg.run)
        if existing is not None and existing.run_id and existing.run_id != attempt.run_id:
            existing = None  # another attempt's checkpoint in a shared --out: start over
        self.checkpoint = existing or Checkpoint(run_id=attempt.run_id)
        if existing is None and cfg.baseline_existing_history:
            self._baseline()
        save_checkpoint(cfg.out, self.checkpoint)
        return attempt.run_id

    @property
    def run_id(self) -> str:
        return self.checkpoint.run_id

    @property
    def settled(self) -> bool:
        return self.checkpoint.status is not None

    def run_once(self) -> dict[str, Any]:
        """Offline mode: import everything complete now; settle if the run has ended."""
        self.start()
        completion = read_completion(self.config.completion_file)
        if not self.settled:
            while self.step(final=completion is not None).lines:
                pass
            if completion is not None:
                self.finish(completion)
        return self.summary()

    def watch(self, stop: threading.Event, *, max_iterations: int = 0) -> dict[str, Any]:
        """Watch mode: step every interval until the run ends or the pod stops us."""
        self.start()
        if self.settled:
            self._write_marker_file(self.config.done_file, "done")
            return self.summary()
        self.step()
        self._write_marker_file(self.config.ready_file, "ready")
        iterations = 1
        while True:
            completion = read_completion(self.config.completion_file)
            if completion is not None:
                self.finish(completion)
                return self.summary()
            if max_iterations and iterations >= max_iterations:
                return self.summary()
            if stop.wait(self.config.interval):
                break
            self.step()
            iterations += 1
        return self.shutdown()

    def shutdown(self) -> dict[str, Any]:
        """Signalled: wait (bounded) for the completion file, drain, settle, say done."""
        deadline = time.monotonic() + self.config.shutdown_wait
        completion = read_completion(self.config.completion_file)
        while completion is None and time.monotonic() < deadline:
            time.sleep(SHUTDOWN_POLL_SECONDS)
            completion = read_completion(self.config.completion_file)
        if completion is None:
            completion = Completion(
                "cancelled",
                reason="sidecar-shutdown",
                message="the offloader was stopped before the workload reported completion",
            )
        self.finish(completion)
        return self.summary()

    def finish(self, completion: Completion) -> None:
        """Final drain (partial tail included), the terminal marker, then the done file."""
        if not self.settled:
            while self.step(final=True).lines:
                pass
            cfg = self.config
            completion = replace(
                completion,
                artifact_uri=completion.artifact_uri or cfg.status_artifact_uri,
                checkpoint_uri=completion.checkpoint_uri or cfg.status_checkpoint_uri,
            )
            settle(cfg.store, self.run_id, completion, source=cfg.source, tags=self._tags())
            self.checkpoint.status = {
                "state": completion.state,
                "reason": completion.reason,
                "completed_at": completion.completed_at.isoformat(),
                "written_at": now(),
            }
            save_checkpoint(cfg.out, self.checkpoint)
            self.say(f"offload: {self.run_id} {completion.state}; tau/run_status recorded")
        self._write_marker_file(self.config.done_file, "done")

    def summary(self) -> dict[str, Any]:
        status = self.checkpoint.status or {}
        return {
            "run_id": self.run_id,
            "points": self.points,
            "files": len(self.checkpoint.files),
            "state": status.get("state", "running"),
            "store": str(self.config.store),
        }

    # -- one step ------------------------------------------------------------------------

    def step(self, *, final: bool = False) -> StepResult:
        """Import what is new; a failure leaves the checkpoint where it was."""
        result = StepResult()
        try:
            if self.checkpoint.pending:
                self._import(self.checkpoint.pending_segments, result)
            segments = self._collect(final, result)
            if segments:
                self.checkpoint.pending = {"segments": [vars(s) for s in segments]}
                save_checkpoint(self.config.out, self.checkpoint)
                self._import(segments, result)
        except TauError as error:
            self._report(error.one_line(), result)
        if result.points:
            self.say(
                f"offload: {result.points} point(s) from {result.files} file(s) into {self.run_id}"
            )
        return result

    def _collect(self, final: bool, result: StepResult) -> list[Segment]:
        found = []
        for path in self._history_files():
            try:
                found.append((path, path.stat()))
            except FileNotFoundError:
                continue
        locate_all(self.checkpoint, found)
        segments: list[Segment] = []
        budget = MAX_BATCH_BYTES
        for path, stat in found:
            state = self.checkpoint.files[str(path)]
            if budget <= 0 or stat.st_size <= state.offset:
                continue
            data = _read(path, state.offset, min(stat.st_size - state.offset, budget))
            if not final:
                cut = data.rfind(b"\n")
                data = data[: cut + 1] if cut >= 0 else b""
            if not data:
                continue
            try:
                scalars, lines, table = validate_chunk(path, data, state.line)
            except HistoryLineError as error:
                self._report(error.one_line(), result, key=f"{path}@{state.offset}")
                continue
            budget -= len(data)
            segment = self._segment(path, state, data, scalars, lines)
            if table is not None:
                self.parsed[segment.chunk] = table
            segments.append(segment)
        return segments

    def _segment(
        self, path: Path, state: FileState, data: bytes, scalars: int, lines: int
    ) -> Segment:
        digest = hashlib.sha256(data).hexdigest()
        source = hashlib.sha256(str(path).encode()).hexdigest()[:8]
        end = state.offset + len(data)
        name = f"{path.name}.{source}.{state.offset}-{end}.{digest[:12]}.jsonl"
        chunk = self._chunk_dir() / name
        atomic.write_bytes(chunk, data if data.endswith(b"\n") else data + b"\n")
        return Segment(
            path=str(path),
            start=state.offset,
            end=end,
            start_line=state.line,
            end_line=state.line + lines,
            sha256=digest,
            chunk=str(chunk),
            scalars=scalars,
        )

    def _import(self, segments: list[Segment], result: StepResult) -> None:
        cfg = self.config
        for segment in segments:
            _restore_chunk(segment)
        scalars = sum(s.scalars for s in segments)
        if scalars:
            batch = hashlib.sha256(
                "\n".join(sorted(Path(s.chunk).name for s in segments)).encode()
            ).hexdigest()[:16]
            import_jsonl(
                cfg.store,
                ImportRequest(
                    run_id=self.run_id,
                    history=[s.chunk for s in segments],
                    project=cfg.run.project,
                    experiment=cfg.run.experiment_id,
                    group=cfg.run.group,
                    state="running",
                    source=cfg.source,
                    tags=self._tags(),
                    idempotency_key=f"metrics-jsonl-{self.run_id}-{batch}",
                    skip_artifact_copy=True,
                    parsed={
                        s.chunk: self.parsed[s.chunk] for s in segments if s.chunk in self.parsed
                    },
                ),
            )
        stamp = now()
        for segment in segments:
            state = self.checkpoint.files.setdefault(segment.path, FileState())
            state.offset, state.line = segment.end, segment.end_line
            state.updated_at = stamp
            try:
                stat = os.stat(segment.path)
                state.size_bytes, state.mod_time = stat.st_size, stat.st_mtime
            except FileNotFoundError:
                pass
        self.checkpoint.pending = None
        save_checkpoint(cfg.out, self.checkpoint)
        for segment in segments:
            Path(segment.chunk).unlink(missing_ok=True)
            self.parsed.pop(segment.chunk, None)
        result.points += scalars
        result.lines += sum(s.end_line - s.start_line for s in segments)
        result.files += len(segments)
        self.points += scalars

    # -- helpers -------------------------------------------------------------------------

    def _history_files(self) -> list[Path]:
        found: list[Path] = []
        for pattern in self.config.history:
            matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
            for match in matches:
                path = Path(match)
                if path.is_file() and path not in found:
                    found.append(path)
        return found

    def _baseline(self) -> None:
        found = [(path, path.stat()) for path in self._history_files()]
        locate_all(self.checkpoint, found)
        for path, stat in found:
            state = self.checkpoint.files[str(path)]
            with open(path, "rb") as handle:
                data = handle.read(stat.st_size)
            state.offset, state.line = len(data), data.count(b"\n")
            state.size_bytes, state.mod_time = stat.st_size, stat.st_mtime
            state.updated_at = now()

    def _chunk_dir(self) -> Path:
        return self.config.out / CHUNKS_DIR / self.run_id

    def _tags(self) -> dict[str, str]:
        run = self.config.run
        tags = {k: v for k, v in self.config.tags.items() if k not in PROTECTED_TAGS}
        if run.workspace:
            tags["tau_workspace"] = run.workspace
        if run.namespace:
            tags["tau_namespace"] = run.namespace
        if run.attempt is not None:
            tags["tau_retry_attempt"] = str(run.attempt)
        return tags

    def _report(self, message: str, result: StepResult, *, key: str = "") -> None:
        result.errors.append(message)
        if (key or message) not in self.reported:
            self.reported.add(key or message)
            self.say(f"offload: error: {message}")

    def _write_marker_file(self, path: Path | None, word: str) -> None:
        if path is not None:
            atomic.write_text(path, f"{word}\n")


def _read(path: Path, offset: int, length: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(length)


def _restore_chunk(segment: Segment) -> None:
    """A batch recorded as pending whose chunk vanished is re-cut from the source bytes."""
    chunk = Path(segment.chunk)
    if chunk.exists():
        return
    data = _read(Path(segment.path), segment.start, segment.end - segment.start)
    if hashlib.sha256(data).hexdigest() != segment.sha256:
        raise ValidationError(
            f"{segment.path} changed under the offloader (bytes {segment.start}-{segment.end} "
            "differ from the pending batch); history files must only be appended to",
            owner="the training code writing the history",
        )
    atomic.write_bytes(chunk, data if data.endswith(b"\n") else data + b"\n")


def validate_chunk(path: Path, data: bytes, first_line: int) -> tuple[int, int, pa.Table | None]:
    """(scalar points, lines, Arrow rows when Arrow read them) of a chunk; the first bad line
    fails all of it, by number.

    Each line is a JSON object with an integer `_step`, a positive finite `_timestamp` in
    epoch seconds (calendar year 1..9999), and only finite numeric metric values. Arrow's
    JSON reader checks well-formed chunks column-wise; anything it cannot vouch for goes
    through the line-by-line check, which owns the exact rules and messages.
    """
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    table = arrow_rows(data)
    scalars = None if table is None else _columnar_scalars(table)
    if scalars is not None:
        return scalars, lines, table
    return _validate_lines(path, data, first_line), lines, None


def _columnar_scalars(table: pa.Table) -> int | None:
    """Scalar count when every row provably passes, else None (let the exact check decide)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    names = table.column_names
    if "_step" not in names or "_timestamp" not in names:
        return None
    step, stamp = table["_step"], table["_timestamp"]
    if not pa.types.is_integer(step.type) or step.null_count:
        return None
    if not (pa.types.is_integer(stamp.type) or pa.types.is_floating(stamp.type)):
        return None
    if (
        stamp.null_count
        # pyarrow-stubs type compute operands as Arrow scalars; pyarrow takes Python numbers.
        or not pc.all(pc.and_(pc.greater(stamp, 0), pc.less(stamp, MAX_TIMESTAMP))).as_py()  # type: ignore[call-overload]
    ):
        return None
    scalars = 0
    for name in names:
        column = table[name]
        if name.startswith("_"):
            continue
        if pa.types.is_integer(column.type):
            scalars += len(column) - column.null_count
        elif pa.types.is_floating(column.type):
            if pc.all(pc.is_finite(pc.drop_null(column))).as_py() is False:
                return None
            scalars += len(column) - column.null_count
        elif not (
            pa.types.is_string(column.type)
            or pa.types.is_boolean(column.type)
            or pa.types.is_null(column.type)
            or pa.types.is_struct(column.type)
            or pa.types.is_list(column.type)
        ):
            return None
    return scalars


def _validate_lines(path: Path, data: bytes, first_line: int) -> int:
    owner = "the training code writing the history"
    scalars = 0
    for index, raw in enumerate(data.split(b"\n")):
        if not raw.strip():
            continue
        where = f"{path}: line {first_line + index + 1}"
        try:
            obj = json.loads(raw)
        except ValueError as error:
            raise HistoryLineError(f"{where}: invalid JSON ({error})", owner=owner) from None
        if not isinstance(obj, dict):
            raise HistoryLineError(f"{where}: each line must be a JSON object", owner=owner)
        step = obj.get("_step")
        if isinstance(step, bool) or not isinstance(step, int):
            raise HistoryLineError(
                f"{where}: _step must be an integer (got {_shown(step)})", owner=owner
            )
        stamp = _number(obj.get("_timestamp"))
        if stamp is None or not 0 < stamp < MAX_TIMESTAMP:
            raise HistoryLineError(
                f"{where}: _timestamp must be positive epoch seconds before year 10000 "
                f"(got {_shown(obj.get('_timestamp'))})",
                owner=owner,
            )
        for key, value in obj.items():
            if key.startswith("_") or isinstance(value, bool) or not isinstance(value, int | float):
                continue
            if _number(value) is None:
                raise HistoryLineError(f"{where}: {key} must be a finite number", owner=owner)
            scalars += 1
    return scalars


def _number(value: Any) -> float | None:
    """A finite float, or None for anything else (bools, strings, NaN, ±Inf, huge ints)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _shown(value: Any) -> str:
    return json.dumps(value)[:40]

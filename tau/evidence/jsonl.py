"""Importing W&B-style JSONL history (`_step`, `_timestamp`, scalars) into the store.

Each non-blank line is one object; every numeric value whose key does not start with `_`
becomes one metric point. A fast path hands well-formed files to Arrow's JSON reader; any
file it cannot take exactly (blank lines, NaN tokens, mixed types, overflowing literals) goes
through the line-by-line parser, which owns the precise semantics and error messages.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tau.errors import ValidationError
from tau.evidence import atomic, cards, paths, records
from tau.evidence.ids import check_id
from tau.evidence.points import arrow_schema, write_metric_file
from tau.evidence.schema import METRIC_SCHEMA_VERSION
from tau.evidence.store import MANIFEST, Store, canonical_json, now, request_hash
from tau.evidence.summaries import ordinals

if TYPE_CHECKING:
    import pyarrow as pa

IMPORTER_VERSION = "tau.jsonl.import.v1"

# Bounds on one history line: W&B rows are flat or shallow (a histogram is depth 2), and a
# parser recursing into 40 KB of `[` crashes the process (Arrow's JSON reader segfaults).
MAX_LINE_BYTES = 4 << 20
MAX_DEPTH = 64
INT64 = (-(2**63), 2**63 - 1)
# `_timestamp` is epoch seconds; a value past this (year 5138) is read as milliseconds,
# which JavaScript and many loggers write. Beyond what milliseconds can mean, it is refused.
MS_THRESHOLD = 1e11
SECONDS_RANGE = (-62_135_596_800, 253_402_300_799)  # 0001-01-01 .. 9999-12-31
WRITER = "the history's writer"


@dataclass
class ImportRequest:
    run_id: str
    history: list[str]
    project: str = ""
    experiment: str = ""
    group: str = ""
    owner: str = ""
    state: str = "succeeded"
    metric_prefix: str = ""
    source: str = "jsonl"
    tags: dict[str, str] = field(default_factory=dict)
    step_field: str = "_step"
    time_field: str = "_timestamp"
    idempotency_key: str = ""
    skip_artifact_copy: bool = False
    dry_run: bool = False
    # Arrow tables a caller already read from these exact history files with `arrow_rows`
    # (the offloader validates each chunk that way), so the same bytes are not parsed twice.
    parsed: dict[str, pa.Table] = field(default_factory=dict, repr=False)


@dataclass
class _History:
    path: Path
    data: bytes
    sha256: str
    table: pa.Table
    scalar_rows: int


def expand_history(patterns: list[str]) -> list[Path]:
    found: list[Path] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not matches:
            raise ValidationError(f"--history {pattern!r} matches no file", owner="the user")
        for match in matches:
            path = Path(match)
            if not path.is_file():
                raise ValidationError(f"--history {match}: no such file", owner="the user")
            if path not in found:
                found.append(path)
    if not found:
        raise ValidationError("import jsonl needs at least one --history file", owner="the user")
    return found


# -- parsing -----------------------------------------------------------------------------


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Overflow(text)
    return value


class _Overflow(ValueError):
    pass


# A line that does not open an object: only the exact parser may see it.
_NOT_AN_OBJECT = re.compile(rb"(?m)^[ \t\r]*[^{\s]")
_STRING = re.compile(rb'"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}\n")


def check_shape(data: bytes, path: Path) -> None:
    """Refuse invalid UTF-8, over-long lines and deep nesting before any parser runs."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ValidationError(f"{path}:{line}: line is not valid UTF-8", owner=WRITER) from None
    if len(data) > MAX_LINE_BYTES:
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            end = len(data) if end < 0 else end
            if end - start > MAX_LINE_BYTES:
                line = data.count(b"\n", 0, start) + 1
                raise ValidationError(
                    f"{path}:{line}: line is longer than {MAX_LINE_BYTES} bytes", owner=WRITER
                )
            start = end + 1
    # Cheap bound first: nesting never exceeds the number of openers on a line.
    openers = data.translate(None, bytes(b for b in range(256) if b not in b"[{\n"))
    if max(map(len, openers.split(b"\n")), default=0) <= MAX_DEPTH:
        return
    for number, raw in enumerate(data.split(b"\n"), 1):
        if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
            continue
        depth = 0
        for char in _STRING.sub(b"", raw).translate(None, _NOT_BRACKET):
            depth += 1 if char in b"[{" else -1
            if depth > MAX_DEPTH:
                raise ValidationError(
                    f"{path}:{number}: JSON nested deeper than {MAX_DEPTH} levels", owner=WRITER
                )


def _step(value: float | None, where: str, name: str) -> int | None:
    if value is None:
        return None
    if not math.isfinite(value) or not INT64[0] <= int(value) <= INT64[1]:
        raise ValidationError(
            f"{where}: {name} must be a finite integer within 64 bits", owner=WRITER
        )
    return int(value)


def _wall_micros(value: float | None, where: str, name: str) -> int | None:
    if value is None:
        return None
    seconds = value / 1000 if value >= MS_THRESHOLD else value
    if not math.isfinite(seconds) or not SECONDS_RANGE[0] <= seconds <= SECONDS_RANGE[1]:
        raise ValidationError(
            f"{where}: {name} must be epoch seconds or milliseconds between years 1 and 9999",
            owner=WRITER,
        )
    return round(seconds * 1_000_000)


def _parse_exact(data: bytes, path: Path, req: ImportRequest) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {"key": [], "line": [], "step": [], "wall": [], "value": []}
    reserved = (req.step_field, req.time_field)
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(raw, parse_float=_finite_float, parse_constant=float)
        except _Overflow as error:
            raise ValidationError(
                f"{where}: value {str(error)[:40]} must be a finite number", owner=WRITER
            ) from None
        except ValueError as error:
            raise ValidationError(
                f"{where}: invalid JSON ({str(error)[:120]})", owner=WRITER
            ) from None
        except RecursionError:
            raise ValidationError(f"{where}: JSON nested too deeply", owner=WRITER) from None
        if not isinstance(obj, dict):
            raise ValidationError(
                f"{where}: each line must be a JSON object", owner="the history's writer"
            )
        step = _step(_number(obj.get(req.step_field), where, req.step_field), where, req.step_field)
        wall = _wall_micros(
            _number(obj.get(req.time_field), where, req.time_field), where, req.time_field
        )
        for key, value in obj.items():
            if key.startswith("_") or key in reserved:
                continue
            if not key.isascii() and not _encodable(key):
                raise ValidationError(f"{where}: a key is not valid UTF-8", owner=WRITER)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            try:
                number = float(value)
            except OverflowError:
                raise ValidationError(
                    f"{where}: value of {key!r} must be a finite number",
                    owner="the history's writer",
                ) from None
            cols["key"].append(key)
            cols["line"].append(lineno)
            cols["step"].append(step)
            cols["wall"].append(wall)
            cols["value"].append(number)
    return cols


def _number(value: Any, where: str, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"{where}: {name} must be a number", owner=WRITER)
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if math.isnan(number):
        raise ValidationError(f"{where}: {name} must be a number", owner=WRITER)
    return value if isinstance(value, int) and math.isfinite(number) else number


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate escape such as "\\ud800"
        return False
    return True


def arrow_rows(data: bytes) -> pa.Table | None:
    """Row i of the table is line i + 1, or None when only the exact parser may decide."""
    import pyarrow as pa
    import pyarrow.json as pj

    if not data.strip() or b"NaN" in data or b"Infinity" in data or _NOT_AN_OBJECT.search(data):
        return None  # Arrow's reader segfaults on a history of `null` lines, for one
    try:
        # One block, one thread: per-run histories are small and many; threads only add overhead.
        options = pj.ReadOptions(use_threads=False, block_size=max(len(data) + 1, 1 << 20))
        # pyarrow-stubs list file paths and IO; read_json takes an Arrow NativeFile too.
        table = pj.read_json(pa.BufferReader(data), read_options=options)  # type: ignore[arg-type]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != data.count(b"\n") + (not data.endswith(b"\n")):
        return None  # blank lines: row i is not line i + 1, so the exact parser numbers them
    return table


def _parse_fast(data: bytes, req: ImportRequest, table: pa.Table | None) -> dict[str, Any] | None:
    """Columns via Arrow's JSON reader, or None when the exact parser must decide."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if table is None:
        table = arrow_rows(data)
    if table is None:
        return None
    n = table.num_rows
    names = table.column_names

    def numeric(name: str) -> pa.ChunkedArray[Any] | None:
        if name not in names:
            return pa.chunked_array([pa.nulls(n, pa.float64())])
        col = table[name]
        if pa.types.is_null(col.type):
            return pa.chunked_array([pa.nulls(n, pa.float64())])
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            return col
        return None

    step = numeric(req.step_field)
    stamp = numeric(req.time_field)
    if step is None or stamp is None:
        return None
    try:
        step, wall = _fast_step_and_wall(step, stamp)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # out-of-range values: the exact parser names the line
    if step is None:
        return None
    line = ordinals(n, start=1)
    keys: list[str] = []
    parts: list[pa.Table] = []
    for name in names:
        col = table[name]
        if (
            name.startswith("_")
            or name in (req.step_field, req.time_field)
            or not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type))
        ):
            continue
        # Unchecked, as the exact parser's float(): an integer beyond 2**53 rounds to the
        # nearest double (Arrow's checked cast raised on -121645100408832001).
        values = col.cast(pa.float64(), safe=False)
        if (
            pa.types.is_floating(col.type)
            and not pc.all(pc.is_finite(pc.drop_null(values))).as_py()
        ):
            return None
        mask = pc.is_valid(values)
        idx = len(keys)
        keys.append(name)
        part = pa.table({"line": line, "step": step, "wall": wall, "value": values}).filter(mask)
        parts.append(
            part.append_column("key_index", pa.repeat(pa.scalar(idx, pa.int32()), part.num_rows))
        )
    if not parts:
        return {"keys": [], "table": None}
    merged = pa.concat_tables(parts).sort_by([("line", "ascending"), ("key_index", "ascending")])
    return {"keys": keys, "table": merged}


def _fast_step_and_wall(step: Any, stamp: Any) -> tuple[Any, Any]:
    """int64 steps and µs wall times, or (None, None) when any value is out of range."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_floating(step.type):
        finite = pc.drop_null(step)
        if len(finite) and not pc.all(pc.is_finite(finite)).as_py():
            return None, None
        bounds = pc.min_max(step)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if low is not None and not (INT64[0] <= low and high < 2.0**63):
            return None, None
        step = pc.trunc(step)
    elif pa.types.is_unsigned_integer(step.type):
        return None, None
    step = step.cast(pa.int64())
    seconds = stamp.cast(pa.float64())
    seconds = pc.if_else(
        # pyarrow-stubs type compute operands as Arrow scalars; pyarrow takes Python numbers.
        pc.greater_equal(seconds, MS_THRESHOLD),  # type: ignore[call-overload]
        pc.divide(seconds, 1000.0),
        seconds,
    )
    bounds = pc.min_max(seconds)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is not None and not (SECONDS_RANGE[0] <= low and high <= SECONDS_RANGE[1]):
        return None, None
    wall = pc.round(pc.multiply(seconds, 1_000_000.0)).cast(pa.int64())
    return step, wall


def _exact_to_columns(cols: dict[str, list[Any]]) -> dict[str, Any]:
    import pyarrow as pa

    keys: list[str] = []
    index: dict[str, int] = {}
    key_index = []
    for key in cols["key"]:
        if key not in index:
            index[key] = len(keys)
            keys.append(key)
        key_index.append(index[key])
    table = pa.table(
        {
            "line": pa.array(cols["line"], pa.int64()),
            "step": pa.array(cols["step"], pa.int64()),
            "wall": pa.array(cols["wall"], pa.int64()),
            "value": pa.array(cols["value"], pa.float64()),
            "key_index": pa.array(key_index, pa.int32()),
        }
    )
    return {"keys": keys, "table": table if cols["key"] else None}


def _point_table(
    parsed: dict[str, Any], path: Path, run: records.RunRecord, req: ImportRequest
) -> pa.Table | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    table = parsed["table"]
    if table is None or table.num_rows == 0:
        return None
    names, prefixes, suffixes = [], [], []
    marker = "\u0000LINE\u0000"
    for key in parsed["keys"]:
        name = f"{req.metric_prefix}{key}".strip()
        tags = dict(req.tags)
        tags.update(
            {
                "jsonl.raw_key": key,
                "jsonl.history_file": path.name,
                "jsonl.history_path": str(path),
                "jsonl.history_line": marker,
                "jsonl.importer": IMPORTER_VERSION,
                "tau.metric.card": cards.card_for(name),
                "tau.metric.standard": cards.standard_name(name),
            }
        )
        head, tail = canonical_json(tags).split(json.dumps(marker)[1:-1], 1)
        names.append(name)
        prefixes.append(head)
        suffixes.append(tail)
    idx = table["key_index"]
    n = table.num_rows

    def const(value: str) -> pa.Array[Any]:
        return pa.repeat(pa.scalar(value, pa.string()), n)

    tags_col = pc.binary_join_element_wise(
        pc.take(pa.array(prefixes, pa.string()), idx),
        table["line"].cast(pa.string()),
        pc.take(pa.array(suffixes, pa.string()), idx),
        "",
    )
    return pa.table(
        {
            "project": const(run.project),
            "run_group_id": const(run.run_group_id),
            "run_id": const(run.run_id),
            "metric_name": pc.take(pa.array(names, pa.string()), idx),
            "step": table["step"],
            "wall_time": table["wall"].cast(pa.timestamp("us", tz="UTC")),
            "value": table["value"],
            "unit": pa.nulls(n, pa.string()),
            "source": const(req.source),
            "split": pa.nulls(n, pa.string()),
            "tags": tags_col,
        },
        schema=arrow_schema(),
    )


def parse_history(path: Path, run: records.RunRecord, req: ImportRequest) -> _History:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ValidationError(f"--history {path}: {error.strerror}", owner="the user") from None
    check_shape(data, path)
    parsed = _parse_fast(data, req, req.parsed.get(str(path)))
    if parsed is None:
        parsed = _exact_to_columns(_parse_exact(data, path, req))
    table = _point_table(parsed, path, run, req)
    if table is None:
        table = arrow_schema().empty_table()
    return _History(
        path=path,
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
        table=table,
        scalar_rows=table.num_rows,
    )


# -- import ------------------------------------------------------------------------------


def _run_record(store: Store | None, req: ImportRequest) -> records.RunRecord:
    check_id("run", req.run_id, flag="--run")
    manifest_project = store.project if store else ""
    stored = records.stored_identity(store, req.run_id) if store else ("", "")
    project = req.project or stored[0] or manifest_project or "default"
    check_id("project", project, flag="--project")
    group = req.group or stored[1] or "default"
    check_id("run group", group, flag="--group")
    if req.experiment:
        check_id("experiment", req.experiment, flag="--experiment")
    tags = {"source": req.source, "jsonl.importer": IMPORTER_VERSION, **req.tags}
    return records.RunRecord(
        run_id=req.run_id,
        project=project,
        experiment_id=req.experiment,
        run_group_id=group,
        state=req.state,
        owner=req.owner,
        tags=tags,
    )


def import_jsonl(root: Path | str, req: ImportRequest) -> dict[str, Any]:
    """Import history files for one run; a repeated import of the same content is reused."""
    import pyarrow as pa

    root = Path(root)
    store = Store.open(root) if (root / MANIFEST).exists() or not req.dry_run else None
    run = _run_record(store, req)
    histories = [parse_history(path, run, req) for path in expand_history(req.history)]
    total = sum(h.scalar_rows for h in histories)
    if total == 0:
        raise ValidationError(
            "JSONL history files contain no scalar metrics "
            f"({', '.join(str(h.path) for h in histories)})",
            hint="each line needs at least one numeric key that does not start with '_'",
            owner="the history's writer",
        )
    req_hash = request_hash(
        {
            "importer": IMPORTER_VERSION,
            "metric_schema": METRIC_SCHEMA_VERSION,
            "run": run.run_id,
            "project": run.project,
            "experiment": run.experiment_id,
            "group": run.run_group_id,
            "owner": req.owner,
            "state": req.state,
            "prefix": req.metric_prefix,
            "source": req.source,
            "tags": req.tags,
            "step_field": req.step_field,
            "time_field": req.time_field,
            "skip_artifact_copy": req.skip_artifact_copy,
            "files": [
                {"size": len(h.data), "sha256": h.sha256, "rows": h.scalar_rows} for h in histories
            ],
        }
    )
    hash12 = req_hash[:12]
    key = req.idempotency_key or f"jsonl-{run.run_id}-{hash12}"
    metric_names = sorted(
        # metric_name is a non-null string column (to_pylist is typed as optional values).
        cast(set[str], {n for h in histories for n in h.table["metric_name"].unique().to_pylist()})
    )
    experiment_dir = run.experiment_id or "none"
    rel_path = (
        f"metrics/project={run.project}/experiment={experiment_dir}/group={run.run_group_id}/"
        f"run={run.run_id}/jsonl-{hash12}.parquet"
    )
    result: dict[str, Any] = {
        "run_id": run.run_id,
        "project": run.project,
        "experiment_id": run.experiment_id,
        "group": run.run_group_id,
        "rows": total,
        "metrics": metric_names,
        "history_files": [str(h.path) for h in histories],
        "metric_file": rel_path,
        "idempotency_key": key,
        "dry_run": req.dry_run,
    }
    if req.dry_run:
        return result
    assert store is not None
    with store.mutate() as txn:
        if txn.claim_key(
            key,
            command="import-jsonl",
            target_type="run",
            target_id=run.run_id,
            request_hash=req_hash,
        ):
            result["reused"] = True
            return result
        existing = txn.fetch("runs", {"run_id": run.run_id})
        if existing is None and not run.owner:
            run.owner = "jsonl-import"
        run.created_at = now()
        records.upsert_run(txn, run)
        table = pa.concat_tables([h.table for h in histories])
        write_metric_file(
            txn,
            table,
            rel_path=rel_path,
            file_id=f"jsonl-{run.run_id}-{hash12}",
            project=run.project,
            run_group_id=run.run_group_id,
            run_id=run.run_id,
        )
        if not req.skip_artifact_copy:
            for h in histories:
                _copy_history(txn, run.run_id, h)
    result["reused"] = False
    return result


def _copy_history(txn: Any, run_id: str, history: _History) -> None:
    sha12 = history.sha256[:12]
    rel = f"artifacts/{run_id}/jsonl/{sha12}-{history.path.name}"
    target = paths.inside(txn.store.root, rel)
    if not target.exists():
        atomic.write_bytes(target, history.data)
    row = records.artifact_row(
        run_id, {"type": "metrics-jsonl", "name": history.path.name, "uri": rel}
    )
    row.update(
        artifact_id=f"jsonl-history-{run_id}-{sha12}",
        digest="sha256:" + history.sha256,
        size_bytes=len(history.data),
        content_type="application/x-ndjson",
        preview=json.dumps(
            {"kind": "jsonl_history", "original_path": str(history.path)}, sort_keys=True
        ),
    )
    records.record_artifact(txn, row)

"""Local run records: one JSON file per run, replaced atomically on every change.

A record is the local counterpart of the Job/RayJob object plus its status: it survives the
supervising `tau` process, so `tau run status|logs|get|cancel|list|resume` read it from any
terminal. Writers replace the whole file (temp + rename), so readers never see half a record.
"""

from __future__ import annotations

import json
import re
from dataclasses import Field, asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau import atomicfile, keys
from tau.engine.layout import state_root
from tau.errors import RuntimeFailure, UsageError
from tau.jsontypes import JSONObject

RECORD = "record.json"
KIND = "LocalRun"
API_VERSION = keys.TAU_API_VERSION

# States: the canonical lifecycle vocabulary of `tau run status` plus `cancelled`.
QUEUED, STARTING, RUNNING = "queued", "starting", "running"
SUCCEEDED, FAILED, CANCELLED = "succeeded", "failed", "cancelled"
TERMINAL = (SUCCEEDED, FAILED, CANCELLED)

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Attempt:
    number: int
    pid: int | None = None
    started_at: str = ""
    finished_at: str = ""
    exit_code: int | None = None
    signal: int | None = None
    reason: str = ""
    retry_reason: str = ""
    log: str = ""
    ray_pgid: int | None = None
    # Start stamps (procgroup.start_stamp) of the group leaders: signals need them to match.
    pid_stamp: str = ""
    ray_stamp: str = ""


@dataclass
class LocalRun:
    name: str
    kind: str  # Job | RayJob
    launcher: str
    config_path: str
    config_hash: str
    code_sha: str = ""
    state: str = QUEUED
    reason: str = ""
    message: str = ""
    created_at: str = field(default_factory=now)
    started_at: str = ""
    finished_at: str = ""
    supervisor_pid: int | None = None
    supervisor_stamp: str = ""
    cancel_requested: bool = False
    gpus_requested: int = 0
    gpus_available: int = 0
    data_root: str = ""
    output_dir: str = ""
    staging_dir: str = ""
    publication_id: str = ""
    store: str = ""
    experiment: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    max_retries: int = 0
    retry_on: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    tau_command: str = ""
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    @property
    def current(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts else None

    @property
    def directory(self) -> Path:
        return run_dir(self.name)

    def to_json(self) -> JSONObject:
        return {"apiVersion": API_VERSION, "kind": KIND, **asdict(self)}

    @classmethod
    def from_json(cls, data: JSONObject) -> LocalRun:
        """A record from its JSON; a field of the wrong type is a ValueError naming it."""
        if not isinstance(data, dict):
            raise ValueError("the record is not a JSON object")
        values = _typed(cls, data)
        attempts = data.get("attempts", [])
        if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
            raise ValueError("field attempts must be a list of objects")
        values["attempts"] = [Attempt(**_typed(Attempt, a)) for a in attempts]
        return cls(**values)


_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "bool": (bool,),
    "int | None": (int, type(None)),
    "list[str]": (list,),
    "dict[str, str]": (dict,),
    "dict[str, Any]": (dict,),
}


def _typed(cls: type, data: JSONObject) -> JSONObject:
    """The known fields of `data`, each checked against its declared type."""
    values = {}
    for name, spec in cls.__dataclass_fields__.items():  # type: ignore[attr-defined]
        if name == "attempts" or name not in data:
            continue
        value, allowed = data[name], _TYPES.get(str(spec.type), (object,))
        is_bool = isinstance(value, bool) and bool not in allowed
        if is_bool or not isinstance(value, allowed):
            raise ValueError(f"field {name} must be {spec.type}, got {type(value).__name__}")
        values[name] = value
    for name, spec in cls.__dataclass_fields__.items():  # type: ignore[attr-defined]
        if name not in values and name != "attempts" and _required(spec):
            raise ValueError(f"field {name} is missing")
    return values


def _required(spec: Field[object]) -> bool:
    from dataclasses import MISSING

    return spec.default is MISSING and spec.default_factory is MISSING


def check_name(name: str) -> str:
    if not _NAME.match(name) or len(name) > 63:
        raise UsageError(
            f"run name {name!r} is not a valid local run name (lowercase letters, digits, "
            "'-' and '.', at most 63 characters)"
        )
    return name


def run_dir(name: str) -> Path:
    return state_root() / "runs" / name


def save(run: LocalRun) -> None:
    path = run_dir(run.name) / RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    atomicfile.write_text(path, json.dumps(run.to_json(), indent=2, sort_keys=True) + "\n")


def load(name: str) -> LocalRun | None:
    path = run_dir(name) / RECORD
    try:
        run = LocalRun.from_json(json.loads(path.read_text(encoding="utf-8")))
        if run.name != name:  # the name picks every path the run writes: it must be its own
            raise ValueError(f"field name {run.name[:80]!r} is not the run directory's name")
        return run
    except FileNotFoundError:
        return None
    except RecursionError:
        error_text = "JSON nested too deeply"
    except OSError as error:  # a directory, unreadable permissions
        error_text = f"{type(error).__name__}: {error.strerror}"
    except (ValueError, TypeError, AttributeError) as error:  # JSON, UTF-8 or shape
        error_text = f"{type(error).__name__}: {str(error)[:200]}"
    raise RuntimeFailure(
        f"local run record {path} is unreadable ({error_text})",
        hint=f"restore it, or delete {path.parent} to forget that run",
        owner="researcher: this machine's local run state",
    )


def require(name: str) -> LocalRun:
    run = load(name)
    if run is None:
        raise UsageError(
            f"no local run named {name!r}",
            hint="list local runs with `tau run list --local`",
        )
    return run


def exists(name: str) -> bool:
    return (run_dir(name) / RECORD).is_file()


def all_runs() -> tuple[list[LocalRun], list[RuntimeFailure]]:
    """Every readable record, newest first, and why the others are unreadable (one broken
    record must not hide the rest)."""
    root = state_root() / "runs"
    runs, broken = [], []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        try:
            run = load(path.name)
        except RuntimeFailure as error:
            broken.append(error)
            continue
        if run is not None:
            runs.append(run)
    return sorted(runs, key=lambda r: r.created_at, reverse=True), broken


def free_name(base: str) -> str:
    """`<config name>-<yyyymmdd-hhmmss>`, suffixed when a run of that name exists already
    (two runs started in the same second). Nothing is created: `claim` takes the name."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    stem = f"{base[: 63 - 19]}-{stamp}".strip("-.")
    name, n = stem, 1
    while run_dir(name).exists():
        n += 1
        name = f"{stem}-{n}"
    return name


def claim(name: str) -> bool:
    """Create the run's directory exclusively, so two `tau run` processes never share a
    name: False when another one claimed it first."""
    (state_root() / "runs").mkdir(parents=True, exist_ok=True)
    try:
        run_dir(name).mkdir()
    except FileExistsError:
        return False
    return True

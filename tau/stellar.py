"""`tau.stellar`: a W&B-style logger for training code that writes TauGrid evidence.

    from tau import stellar

    run = stellar.init(project="quickstart", config={"lr": 0.1})
    for step in range(100):
        stellar.log({"loss": loss, "accuracy": acc}, step=step)
    stellar.finish()

`log` writes W&B-shaped rows (`_step`, `_timestamp`, scalars) to a local packet directory
(`history.jsonl`, `config.json`, `run.json`, `artifacts/`). `finish()` syncs the packet into
the experiment store through the store API: the experiment, the run with its config and
artifacts, and the metric history, each idempotent, so a repeated sync changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import re
import secrets
import shutil
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau import atomicfile, keys

DEFAULT_PACKET_ROOT = Path(".tau") / "stellar"
DEFAULT_LOCAL_STORE = Path(".tau") / "store"
SOURCE = "stellar-python"

__all__ = [
    "Html",
    "Image",
    "Run",
    "Table",
    "finish",
    "init",
    "log",
    "log_artifact",
    "use_artifact",
]


@dataclass(frozen=True)
class Image:
    path: str
    caption: str = ""


@dataclass(frozen=True)
class Html:
    content: str = ""
    path: str = ""
    caption: str = ""


@dataclass(frozen=True)
class Table:
    rows: list[list[Any]]
    columns: list[str] = field(default_factory=list)
    caption: str = ""


_MEDIA = (Image, Html, Table)
_active: Run | None = None


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "run"


def _env(*names: str) -> str:
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    return ""


def _infer_type(key: str, media: Any, path: Path) -> str:
    lowered = f"{key} {path.name}".lower()
    if isinstance(media, Table):
        return "table"
    if isinstance(media, Html):
        return "report"
    if isinstance(media, Image):
        for word in ("retrieval", "embedding"):
            if word in lowered:
                return word
        return "image"
    suffix = path.suffix.lower()
    if suffix in (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"):
        return "image"
    if suffix in (".html", ".htm", ".md", ".pdf"):
        return "report"
    if suffix in (".csv", ".tsv", ".parquet") or "table" in lowered:
        return "table"
    if suffix in (".pt", ".pth", ".ckpt", ".safetensors", ".bin") or "checkpoint" in lowered:
        return "checkpoint"
    return "artifact"


class Run:
    """One training run's local packet; use the module functions for the active run."""

    def __init__(
        self,
        *,
        project: str,
        name: str,
        group: str,
        experiment: str,
        experiment_id: str,
        config: dict[str, Any],
        packet_dir: Path,
        store: str,
        owner: str,
    ) -> None:
        self.project = project
        self.name = name
        self.group = group
        self.experiment = experiment
        self.experiment_id = experiment_id
        self.config = config
        self.dir = packet_dir
        self.store = store
        self.owner = owner
        self.artifacts: list[dict[str, Any]] = []
        self.history_path = packet_dir / "history.jsonl"
        self.finished = False
        (packet_dir / "artifacts").mkdir(parents=True, exist_ok=True)
        (packet_dir / "config.json").write_text(
            json.dumps(config, indent=2, sort_keys=True, default=str) + "\n"
        )
        self.history_path.touch()
        self._write_run_json()

    # -- logging -----------------------------------------------------------------------

    def log(self, data: dict[str, Any], step: int | None = None) -> None:
        scalars: dict[str, float] = {}
        for key, value in data.items():
            if isinstance(value, _MEDIA):
                self.log_artifact(value, name=key, step=step)
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(
                    f"stellar.log({key!r}): only numeric scalars (int or float) can be logged, "
                    f"got {type(value).__name__}; use log_artifact for files and media"
                )
            if not math.isfinite(value):
                raise ValueError(
                    f"stellar.log({key!r}): value must be a finite number, got {value}"
                )
            scalars[key] = value
        if not scalars:
            return
        row: dict[str, Any] = {"_timestamp": time.time(), **scalars}
        if step is not None:
            row["_step"] = int(step)
        with open(self.history_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row, sort_keys=True) + "\n")

    def log_artifact(
        self,
        artifact: str | os.PathLike[str] | Image | Html | Table,
        *,
        name: str = "",
        type: str = "",
        step: int | None = None,
        caption: str = "",
        alias: str = "",
    ) -> dict[str, Any]:
        """Copy a file or media object into the packet and remember it as an output."""
        target_dir = self.dir / "artifacts"
        if isinstance(artifact, Table):
            source_name = "table.json"
            payload: bytes | Path = json.dumps(
                {"columns": artifact.columns, "rows": artifact.rows}, default=str
            ).encode()
        elif isinstance(artifact, Html):
            source_name = Path(artifact.path).name if artifact.path else "report.html"
            payload = Path(artifact.path) if artifact.path else artifact.content.encode()
        else:
            path = Path(artifact.path if isinstance(artifact, Image) else os.fspath(artifact))
            if not path.is_file():
                raise FileNotFoundError(f"stellar.log_artifact: {path} is not a file")
            source_name, payload = path.name, path
        key = name or Path(source_name).stem
        suffix = (
            ".json"
            if isinstance(artifact, Table)
            else ".html"
            if isinstance(artifact, Html)
            else Path(source_name).suffix
        )
        file_name = _safe(key) + (f"-step-{step}" if step is not None else "") + suffix
        target = target_dir / file_name
        if isinstance(payload, Path):
            shutil.copyfile(payload, target)
        else:
            target.write_bytes(payload)
        entry: dict[str, Any] = {
            "key": key,
            "type": type or _infer_type(key, artifact, target),
            "path": str(target),
            "name": file_name,
            "direction": "output",
        }
        caption = caption or getattr(artifact, "caption", "")
        if caption:
            entry["caption"] = caption
        if step is not None:
            entry["step"] = int(step)
        if alias:
            entry["alias"] = alias
        self.artifacts = [a for a in self.artifacts if a["name"] != file_name] + [entry]
        self._write_run_json()
        return entry

    def use_artifact(self, ref: str) -> Path:
        """Fetch an artifact another run logged (by alias, id or name, newest first)."""
        from tau.evidence import Store
        from tau.evidence.query import newest_output_artifact

        store = Store.open(self._store_path())
        row = newest_output_artifact(store, ref)
        if row is None:
            raise LookupError(f"stellar.use_artifact: no artifact {ref!r} in {store.root}")
        source = Path(row["uri"])
        source = source if source.is_absolute() else store.root / source
        local = self.dir / "artifacts" / f"input-{row['name']}"
        shutil.copyfile(source, local)
        entry = {
            "key": f"input-{row['name']}",
            "type": "artifact",
            "path": str(local),
            "name": local.name,
            "direction": "input",
            "source_artifact_id": row["artifact_id"],
            "source_run_id": row["run_id"],
        }
        self.artifacts = [a for a in self.artifacts if a["name"] != local.name] + [entry]
        self._write_run_json()
        return local

    # -- finishing ---------------------------------------------------------------------

    def _write_run_json(self) -> None:
        data = {
            "project": self.project,
            "name": self.name,
            "group": self.group,
            "experiment": self.experiment,
            "experiment_id": self.experiment_id,
            "history": str(self.history_path),
            "artifacts": self.artifacts,
        }
        atomicfile.write_text(
            self.dir / "run.json", json.dumps(data, indent=2, sort_keys=True) + "\n"
        )

    def _store_path(self) -> Path:
        from tau.errors import UsageError
        from tau.evidence import resolve_store_path

        try:
            return resolve_store_path(self.store or None)
        except UsageError:
            return DEFAULT_LOCAL_STORE.resolve()

    def finish(self, sync: bool = True) -> dict[str, Any] | None:
        global _active
        self._write_run_json()
        self.finished = True
        if _active is self:
            _active = None
        return self.sync() if sync else None

    def sync(self) -> dict[str, Any]:
        """Write the packet into the store: experiment, run + artifacts, tag, history."""
        from tau.evidence import (
            ImportRequest,
            RunRecord,
            TrackRequest,
            import_jsonl,
            init_experiment,
            tag_run,
            track_run,
        )

        root = self._store_path()
        init_experiment(
            root,
            self.experiment_id,
            project=self.project,
            description=self.experiment if self.experiment else "",
            group=self.group,
        )
        store_artifacts = root / "artifacts" / self.name
        store_artifacts.mkdir(parents=True, exist_ok=True)
        specs: list[dict[str, Any]] = []
        for entry in self.artifacts:
            copied = store_artifacts / entry["name"]
            shutil.copyfile(entry["path"], copied)
            spec: dict[str, Any] = {
                k: entry[k]
                for k in ("type", "name", "caption", "direction", "alias", "step")
                if k in entry
            }
            spec["uri"] = str(copied.relative_to(root))
            for k in ("source_artifact_id", "source_run_id"):
                if k in entry:
                    spec[k] = entry[k]
            specs.append(spec)
        digest = hashlib.sha256(json.dumps(specs, sort_keys=True).encode()).hexdigest()[:12]
        runtime = json.dumps(
            {"python": platform.python_version(), "platform": sys.platform}, sort_keys=True
        )
        track_run(
            root,
            TrackRequest(
                run=RunRecord(
                    run_id=self.name,
                    project=self.project,
                    run_group_id=self.group,
                    state="succeeded",
                    owner=self.owner,
                    context={
                        "runtime": runtime,
                        "dependencies": json.dumps({"taugrid": _version()}),
                        "log_uri": str(self.history_path),
                    },
                ),
                configs=[(self.dir / "config.json", "json")],
                artifacts=specs,
                idempotency_key=f"stellar-{self.name}-artifacts-{digest}",
            ),
        )
        tag_run(
            root,
            self.name,
            experiment_id=self.experiment_id,
            name=self.experiment or self.experiment_id,
        )
        result: dict[str, Any] = {"store": str(root), "run": self.name, "rows": 0}
        data = self.history_path.read_bytes()
        if data.strip():
            history_key = hashlib.sha256(data).hexdigest()[:12]
            imported = import_jsonl(
                root,
                ImportRequest(
                    run_id=self.name,
                    history=[str(self.history_path)],
                    project=self.project,
                    experiment=self.experiment_id,
                    group=self.group,
                    source=SOURCE,
                    idempotency_key=f"stellar-{self.name}-history-{history_key}",
                ),
            )
            result["rows"] = imported["rows"]
        return result


def _version() -> str:
    from tau.version import __version__

    return __version__


def init(
    project: str = "",
    run: str = "",
    *,
    name: str = "",
    group: str = "",
    experiment: str = "",
    experiment_id: str = "",
    config: dict[str, Any] | None = None,
    dir: str | os.PathLike[str] | None = None,
    store: str = "",
    owner: str = "",
) -> Run:
    """Start a run and make it the active one for `log`, `log_artifact` and `finish`."""
    global _active
    from tau.evidence.ids import safe_id, slug

    project = safe_id(project or _env(keys.ENV_PROJECT) or "default")
    job_prefix = _env(keys.ENV_JOB_NAME).split("-", 1)[0]
    group = safe_id(group or _env(keys.ENV_GROUP) or job_prefix or "default")
    experiment_id = (
        experiment_id
        or _env(keys.ENV_EXPERIMENT_ID, keys.ENV_EXPERIMENT)
        or slug(experiment)
        or project
    )
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    run_name = safe_id(
        run
        or name
        or _env(keys.ENV_RUN_NAME)
        or f"{slug(project) or 'run'}-{stamp}-{secrets.token_hex(2)}",
        default="run",
    )
    packet_root = Path(dir) if dir else Path(_env(keys.ENV_STELLAR_DIR) or DEFAULT_PACKET_ROOT)
    _active = Run(
        project=project,
        name=run_name,
        group=group,
        experiment=experiment,
        experiment_id=safe_id(experiment_id),
        config=dict(config or {}),
        packet_dir=packet_root / _safe(run_name),
        store=store,
        owner=owner,
    )
    return _active


def _require() -> Run:
    if _active is None:
        raise RuntimeError("no active stellar run: call stellar.init() first")
    return _active


def log(data: dict[str, Any], step: int | None = None) -> None:
    _require().log(data, step=step)


def log_artifact(artifact: Any, **kwargs: Any) -> dict[str, Any]:
    return _require().log_artifact(artifact, **kwargs)


def use_artifact(ref: str) -> Path:
    return _require().use_artifact(ref)


def finish(sync: bool = True) -> dict[str, Any] | None:
    return _require().finish(sync=sync)

"""`Ctx`: what a decorated function knows about where it runs.

Locally (calling the handle) it points at a directory under `.tau/runs/<name>`; in the
cluster the in-pod wrapper builds it from the manifest and the workload's `TAU_*`
environment. `report(...)` collects final metrics; when the function returns they are
written beside the run's checkpoints as `metrics.json` (and `model.json` for a named
model, naming the checkpoint at `checkpoint_path` when the function saved one), which
`tau data model index rebuild` turns into model registry rows.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau import keys

METRICS = "metrics.json"
MODEL = "model.json"


@dataclass
class Ctx:
    name: str
    gpus: int = 1
    workers: int = 1
    is_remote: bool = False
    manifest: dict[str, Any] = field(default_factory=dict)
    upstream_checkpoint: Path | None = None
    output_dir: Path = Path(".")
    data_dir: Path | None = None
    storage_hot_status: str | None = None
    storage_hot_write_mbps: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def checkpoint_dir(self) -> Path:
        """Where the function saves checkpoints (`artifacts/` of the run directory)."""
        return self.output_dir / "artifacts"

    @property
    def checkpoint_path(self) -> Path:
        name = (self.manifest.get("artifacts") or {}).get("checkpoint") or "last.safetensors"
        return self.checkpoint_dir / name

    @property
    def world_size(self) -> int:
        return self.workers * self.gpus if self.gpus else self.workers

    def report(self, **metrics: float) -> None:
        """Record final metric values (the last report of a name wins)."""
        for name, value in metrics.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"ctx.report({name}=...) takes numeric scalars, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"ctx.report({name}=...) must be finite, got {value!r}")
            self.metrics[name] = float(value)

    def finish(self) -> None:
        """Write the reported metrics and the model record into the run directory."""
        if not self.metrics:
            return
        self.output_dir.mkdir(parents=True, exist_ok=True)
        (self.output_dir / METRICS).write_text(json.dumps(self.metrics, indent=2) + "\n")
        model = self.manifest.get("model") or {}
        if model.get("name"):
            (self.output_dir / MODEL).write_text(json.dumps(model_record(self), indent=2) + "\n")

    @classmethod
    def from_environment(cls, manifest: dict[str, Any]) -> Ctx:
        """The in-cluster context: the manifest plus the workload's environment."""
        compute = manifest.get("compute") or {}
        upstream = os.environ.get(keys.ENV_UPSTREAM_CHECKPOINT) or None
        output = os.environ.get(keys.ENV_OUTPUT_DIR) or f"/tmp/{manifest.get('name', 'run')}"
        speed = os.environ.get(keys.ENV_STORAGE_HOT_WRITE_MBPS)
        return cls(
            name=str(manifest.get("name", "")),
            gpus=int(compute.get("gpus", 1)),
            workers=int(compute.get("workers", 1)),
            is_remote=True,
            manifest=manifest,
            upstream_checkpoint=Path(upstream) if upstream else None,
            output_dir=Path(output),
            data_dir=Path(os.environ[keys.ENV_DATA_DIR])
            if keys.ENV_DATA_DIR in os.environ
            else None,
            storage_hot_status=os.environ.get(keys.ENV_STORAGE_HOT_STATUS),
            storage_hot_write_mbps=float(speed) if speed else None,
        )


def model_record(ctx: Ctx) -> dict[str, Any]:
    """The partial model registry record a run leaves as `model.json`."""
    model = ctx.manifest.get("model") or {}
    record: dict[str, Any] = {
        "schema_version": 1,
        "kind": "tau.model",
        "model": model["name"],
        "run": ctx.name,
        "metrics": ctx.metrics,
        "tags": dict(model.get("tags") or {}),
        "model_metadata": {k: model[k] for k in ("base", "task") if model.get(k)},
    }
    if model.get("primary_metric"):
        record["primary_metric"] = {
            "name": model["primary_metric"],
            "value": ctx.metrics.get(model["primary_metric"]),
            "direction": model.get("metric_direction"),
        }
    checkpoint = ctx.checkpoint_path
    if checkpoint.exists():
        # What `tau serve deploy --from-model` mounts: the checkpoint itself, not the run dir.
        record["artifacts"] = [
            {
                "name": "checkpoint",
                "durable_path": str(checkpoint.absolute()),
                "status": "ready",
                "kind": "directory" if checkpoint.is_dir() else "file",
            }
        ]
    return record

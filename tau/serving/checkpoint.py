"""Where an endpoint's model state comes from: a path on the serving PVC, mounted at /data.

`--checkpoint` is resolved offline; `--from-finetune` and `--checkpoint-ref` read the
finished run's annotations and `--from-model` the model registry on the PVC, so those need
the cluster (server dry-run or a live deploy).
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tau import keys
from tau.errors import RuntimeFailure
from tau.render.endpoint import Checkpoint
from tau.render.env import DATA_DIR
from tau.serving.flags import echo, usage

if TYPE_CHECKING:
    from tau.kube import KubeClient

CHECKPOINTS_DIR = f"{DATA_DIR}/checkpoints"
FINETUNES_DIR = f"{CHECKPOINTS_DIR}/finetunes"
RUN_OWNER = "researcher: the finetune run"


def resolve_path(path: str) -> str:
    """`projects/…` lives under /data, any other relative path under /data/checkpoints;
    absolute paths must stay inside /data (the only thing the PVC provides)."""
    text = path.strip()
    if not text:
        raise usage("--checkpoint is empty")
    if ".." in text.split("/"):
        raise usage(f"--checkpoint {echo(text)} must not contain '..'")
    if text.startswith("/"):
        resolved = posixpath.normpath(text)
        if resolved != DATA_DIR and not resolved.startswith(DATA_DIR + "/"):
            raise usage(
                f"--checkpoint {echo(text)} is outside {DATA_DIR}, where --checkpoint-pvc is"
                " mounted",
                hint="pass a path under /data or a relative path",
            )
        return resolved
    if text == "projects" or text.startswith("projects/"):
        return posixpath.normpath(f"{DATA_DIR}/{text}")
    return posixpath.normpath(f"{CHECKPOINTS_DIR}/{text}")


@dataclass(frozen=True)
class CheckpointRequest:
    """Exactly one source, already checked for exclusivity by the request."""

    path: str = ""
    finetune: str = ""
    artifact: str = ""
    model: str = ""
    pvc: str = keys.DEFAULT_PVC
    pvc_explicit: bool = False

    @property
    def live(self) -> bool:
        return bool(self.finetune or self.model)

    @property
    def given(self) -> bool:
        return bool(self.path or self.finetune or self.model)


def parse_checkpoint_ref(ref: str) -> tuple[str, str]:
    """`--checkpoint-ref finetune/RUN[:ARTIFACT]` → (run, artifact)."""
    kind, slash, rest = ref.partition("/")
    run, _, artifact = rest.partition(":")
    if kind != "finetune" or not slash or not run:
        raise usage(f"--checkpoint-ref {echo(ref)} must be finetune/RUN[:ARTIFACT]")
    return run, artifact


def offline(request: CheckpointRequest) -> Checkpoint | None:
    if not request.path:
        return None
    return Checkpoint(path=resolve_path(request.path), pvc=request.pvc)


def live(client: KubeClient, namespace: str, request: CheckpointRequest) -> Checkpoint | None:
    """Resolve a finetune run or model reference against the cluster."""
    if request.finetune:
        return from_finetune(client, namespace, request)
    if request.model:
        from tau.serving.registry import model_checkpoint

        return model_checkpoint(client, namespace, request.model, request.pvc)
    return offline(request)


def from_finetune(client: KubeClient, namespace: str, request: CheckpointRequest) -> Checkpoint:
    """The checkpoint a completed run recorded (`tau.azure.com/checkpoint-artifact`)."""
    from tau.kube.resources import JOBS, RAY_JOBS

    run = request.finetune
    found = [
        (resource.kind, obj)
        for resource in (JOBS, RAY_JOBS)
        if (obj := _get_optional(client, resource, run, namespace)) is not None
    ]
    if not found:
        raise RuntimeFailure(
            f'--from-finetune {run}: no Job or RayJob "{run}" in namespace "{namespace}"',
            hint="check the run name with `tau run list`",
            owner=RUN_OWNER,
        )
    if len(found) > 1:
        raise RuntimeFailure(
            f'--from-finetune {run}: both a Job and a RayJob are named "{run}" in'
            f' namespace "{namespace}"; cannot tell which run recorded the checkpoint',
            owner=RUN_OWNER,
        )
    kind, obj = found[0]
    state = _finished(kind, obj)
    if state != "succeeded":
        raise RuntimeFailure(
            f"--from-finetune {run}: the {kind} has not completed successfully ({state})",
            hint="serve a run that succeeded",
            owner=RUN_OWNER,
        )
    annotations = obj.get("metadata", {}).get("annotations") or {}
    artifact = request.artifact or annotations.get(keys.CHECKPOINT_ARTIFACT, "")
    if not artifact:
        raise RuntimeFailure(
            f"--from-finetune {run}: the {kind} records no checkpoint"
            f" (annotation {keys.CHECKPOINT_ARTIFACT})",
            hint="set storage.checkpoint in the run config, or pass --checkpoint",
            owner=RUN_OWNER,
        )
    if artifact.startswith("/") or ".." in artifact.split("/"):
        raise RuntimeFailure(
            f"--from-finetune {run}: recorded checkpoint {echo(artifact)} is not a relative"
            " path inside the run's checkpoint directory",
            owner=RUN_OWNER,
        )
    pvc = _run_pvc(annotations)
    if pvc and request.pvc_explicit and pvc != request.pvc:
        raise usage(
            f"--checkpoint-pvc {request.pvc} differs from PVC {pvc} that run {run} wrote its"
            " checkpoint to",
            hint="drop --checkpoint-pvc",
        )
    path = posixpath.normpath(f"{FINETUNES_DIR}/{run}/{artifact}")
    return Checkpoint(path=path, pvc=pvc or request.pvc)


def _get_optional(client: KubeClient, resource: Any, name: str, namespace: str) -> Any:
    from tau.kube.errors import NotFoundError

    try:
        return client.get_or_none(resource, name, namespace)
    except NotFoundError:  # the API type itself is absent (no KubeRay): no such run
        return None


def _finished(kind: str, obj: dict[str, Any]) -> str:
    status = obj.get("status") or {}
    if kind == "RayJob":
        job = str(status.get("jobStatus") or "").upper()
        return "succeeded" if job == "SUCCEEDED" else (job.lower() or "not started")
    for condition in status.get("conditions") or []:
        if condition.get("status") == "True" and condition.get("type") in ("Complete", "Failed"):
            return "succeeded" if condition["type"] == "Complete" else "failed"
    return "still running" if status.get("active") else "not finished"


def _run_pvc(annotations: dict[str, str]) -> str:
    """The PVC behind the run's /data: the result PVC, else its /data storage mount."""
    if annotations.get(keys.RESULT_PVC):
        return annotations[keys.RESULT_PVC]
    try:
        mounts = json.loads(annotations.get(keys.STORAGE_MOUNTS) or "[]")
    except ValueError:
        return ""
    for mount in mounts if isinstance(mounts, list) else []:
        ref = str(mount.get("source_ref", "")) if isinstance(mount, dict) else ""
        if mount.get("path") == DATA_DIR and ref.startswith("pvc/"):
            return ref[len("pvc/") :]
    return ""

"""Where registry records live on the workspace's data PVC (mounted at /data in every run).

Paths here are relative to the data root, so the same layout serves the PVC (through a
helper pod), a `file://` registry and the local engine's data root. Records store the
absolute in-pod form (`/data/...`) because that is what a workload reads.
"""

from __future__ import annotations

import posixpath

MOUNT = "/data"

DATASETS = "dataset-registry/datasets"
MODELS = "model-registry/models"
# Run directories `model index rebuild` scans: managed workflows and direct runs.
RUN_ROOTS = ("checkpoints/finetunes", "checkpoints/workflows")
# Where `ingest` lands a dataset's bytes when its record names no other prefix.
DATASET_BYTES = "datasets"

RECORD = "dataset.json"
INGEST_STATUS = "ingest-status.json"
MODEL_RECORD = "model.json"
METRICS = "metrics.json"
ARTIFACTS = "artifacts.json"


def dataset_dir(name: str) -> str:
    return f"{DATASETS}/{name}"


def dataset_version_dir(name: str, version: str) -> str:
    return f"{DATASETS}/{name}/{version}"


def dataset_record(name: str, version: str) -> str:
    return f"{dataset_version_dir(name, version)}/{RECORD}"


def ingest_status(name: str, version: str) -> str:
    return f"{dataset_version_dir(name, version)}/{INGEST_STATUS}"


def dataset_aliases(name: str) -> str:
    return f"{DATASETS}/{name}/aliases"


def dataset_alias(name: str, alias: str) -> str:
    return f"{dataset_aliases(name)}/{alias}.json"


def dataset_bytes(name: str, version: str) -> str:
    return f"{DATASET_BYTES}/{name}/{version}"


def model_runs(model: str) -> str:
    return f"{MODELS}/{model}/runs"


def model_run(model: str, run: str) -> str:
    return f"{model_runs(model)}/{run}.json"


def model_alias(model: str, alias: str) -> str:
    return f"{MODELS}/{model}/aliases/{alias}.json"


def in_pod(path: str) -> str:
    """`dataset-registry/...` -> `/data/dataset-registry/...`."""
    return posixpath.join(MOUNT, path) if path else MOUNT


def on_root(path: str) -> str:
    """A user-given data path (`/data/x`, `x`) as a clean path relative to the data root.

    Refuses anything that would leave the data root, so a helper pod never touches a path
    outside the PVC.
    """
    from tau.errors import UsageError

    text = path.strip()
    if text == MOUNT or text.startswith(MOUNT + "/"):
        text = text[len(MOUNT) :].lstrip("/")
    elif text.startswith("/"):
        raise UsageError(
            f"path {path!r} is not on the data PVC: give it relative to the data root or "
            f"under {MOUNT}/"
        )
    clean = posixpath.normpath(text) if text else ""
    if clean in ("", ".") or clean == ".." or clean.startswith("../"):
        raise UsageError(f"path {path!r} must name a directory inside the data root")
    return clean

"""Creating experiments, runs and their evidence records (`init`, `track`, `tag-run`).

Writes are idempotent: a repeated request reuses what is stored, a different request under
the same idempotency key or for the same record is a conflict, never an overwrite.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tau.errors import ValidationError
from tau.evidence import schema
from tau.evidence.errors import StoreConflict
from tau.evidence.ids import check_id
from tau.evidence.points import ensure_summaries
from tau.evidence.store import Store, Transaction, now, request_hash

STATE_RANK = {"pending": 1, "queued": 1, "running": 2}
TERMINAL_STATES = ("succeeded", "completed", "failed", "cancelled")
RUN_COMPARED = (
    "project",
    "run_group_id",
    "parent_run_id",
    "owner",
    "config_hash",
    "code_sha",
    "image_digest",
    "tau_command",
    "result_uri",
    "index_version",
)
CONTEXT_LISTS = ("node_names", "mounts", "resource_claims")
CONTEXT_FLOATS = ("queue_wait_seconds", "gpu_hours", "estimated_cost")


def init_experiment(
    root: Path | str,
    name: str,
    *,
    project: str = "",
    description: str = "",
    group: str = "default",
    idempotency_key: str = "",
) -> dict[str, Any]:
    """Create the store if needed and the experiment `name`; `status` is created or reused.

    A writer brings an existing store up to date here (Store.open migrates the catalogue,
    then files indexed before summaries existed are folded), since readers never write.
    """
    check_id("experiment", name)
    project = project or name
    check_id("project", project, flag="--project")
    group = group or "default"
    check_id("run group", group, flag="--group")
    req = request_hash(
        {"name": name, "project": project, "description": description, "group": group}
    )
    store = Store.create(root, project=project, experiment_id=name)
    ensure_summaries(store)
    with store.mutate() as txn:
        if txn.claim_key(
            idempotency_key,
            command="init",
            target_type="experiment",
            target_id=name,
            request_hash=req,
        ):
            created = False
        else:
            stamp = now()
            created = txn.ensure(
                "experiments",
                {
                    "experiment_id": name,
                    "project": project,
                    "name": name,
                    "description": description,
                    "source": "explicit",
                    "created_at": stamp,
                    "updated_at": stamp,
                },
                ["experiment_id"],
                # An omitted description is "not stated", never a conflicting empty one.
                compare=["project", "description"] if description else ["project"],
            )
            ensure_group(txn, group, project)
    return {
        "status": "created" if created else "reused",
        "reused": not created,
        "experiment_id": name,
        "project": project,
        "group": group,
        "store_path": str(store.root),
    }


def ensure_group(txn: Transaction, group: str, project: str) -> None:
    if txn.fetch("run_groups", {"run_group_id": group}) is None:
        stamp = now()
        txn.insert(
            "run_groups",
            {
                "run_group_id": group,
                "project": project,
                "name": group,
                "created_at": stamp,
                "updated_at": stamp,
            },
        )


def ensure_experiment(txn: Transaction, experiment_id: str, project: str, **extra: str) -> bool:
    if not experiment_id or txn.fetch("experiments", {"experiment_id": experiment_id}):
        return False
    stamp = now()
    txn.insert(
        "experiments",
        {
            "experiment_id": experiment_id,
            "project": project,
            "name": extra.get("name") or experiment_id,
            "description": extra.get("description", ""),
            "source": extra.get("source", "explicit"),
            "created_at": stamp,
            "updated_at": stamp,
        },
    )
    return True


@dataclass
class RunRecord:
    """What is known about one run; empty fields mean "not stated" and never conflict."""

    run_id: str
    project: str = ""
    experiment_id: str = ""
    run_group_id: str = ""
    parent_run_id: str = ""
    state: str = ""
    owner: str = ""
    created_at: str = ""
    started_at: str = ""
    completed_at: str = ""
    config_hash: str = ""
    code_sha: str = ""
    image_digest: str = ""
    tau_command: str = ""
    result_uri: str = ""
    context: dict[str, Any] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolved(self, store: Store, *, default_state: str = "succeeded") -> RunRecord:
        """Apply the store's defaults: project, experiment, group, state, created_at."""
        check_id("run", self.run_id)
        values = asdict(self)
        existing = stored_identity(store, self.run_id)
        values["project"] = self.project or existing[0] or store.project or "default"
        values["run_group_id"] = self.run_group_id or existing[1] or "default"
        values["state"] = self.state or default_state
        values["created_at"] = self.created_at or now()
        check_id("project", values["project"], flag="--project")
        check_id("run group", values["run_group_id"], flag="--group")
        if self.experiment_id:
            check_id("experiment", self.experiment_id, flag="--experiment")
        return RunRecord(**values)


def stored_identity(store: Store, run_id: str) -> tuple[str, str]:
    """(project, run group) of an already stored run, so unstated fields never conflict."""
    import contextlib

    with contextlib.closing(store.connect(readonly=True)) as db:
        row = db.execute(
            "SELECT project, run_group_id FROM runs WHERE run_id=?", (run_id,)
        ).fetchone()
    return (row["project"], row["run_group_id"]) if row else ("", "")


def _merge_state(old: str, new: str, run_id: str) -> str:
    if not new or old == new:
        return old
    if not old:
        return new
    old_rank = STATE_RANK.get(old, 3)
    new_rank = STATE_RANK.get(new, 3)
    if old_rank == 3 and new_rank == 3:
        raise StoreConflict(
            f"run {run_id!r} is already {old}; refusing to record it as {new}",
            hint="terminal states never change; use a new run id for a new attempt",
            owner="the caller writing the record",
        )
    return new if new_rank > old_rank else old


def upsert_run(txn: Transaction, run: RunRecord) -> bool:
    """Create the run row or merge into it; True when created."""
    ensure_group(txn, run.run_group_id, run.project)
    if run.experiment_id:
        ensure_experiment(txn, run.experiment_id, run.project)
    row = {
        "run_id": run.run_id,
        "project": run.project,
        "experiment_id": run.experiment_id,
        "run_group_id": run.run_group_id,
        "parent_run_id": run.parent_run_id,
        "state": run.state,
        "owner": run.owner,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "completed_at": run.completed_at,
        "config_hash": run.config_hash,
        "code_sha": run.code_sha,
        "image_digest": run.image_digest,
        "tau_command": run.tau_command,
        "result_uri": run.result_uri,
        "index_version": schema.SCHEMA_VERSION,
    }
    existing = txn.fetch("runs", {"run_id": run.run_id})
    created = existing is None
    if existing is None:
        txn.insert("runs", row)
    else:
        updates: dict[str, Any] = {}
        diffs = []
        for col in RUN_COMPARED:
            old, new = existing[col] or "", row[col] or ""
            if new and old and old != new:
                diffs.append(col)
            elif new and not old:
                updates[col] = new
        if diffs:
            raise StoreConflict(
                f"run {run.run_id!r} already exists with different {', '.join(diffs)}; "
                "stored evidence is never overwritten",
                hint="use a new run id, or repeat the original values",
                owner="the caller writing the record",
            )
        state = _merge_state(existing["state"], row["state"], run.run_id)
        if state != existing["state"]:
            updates["state"] = state
        for col in ("started_at", "completed_at", "experiment_id"):
            if row[col] and not existing[col]:
                updates[col] = row[col]
        if updates:
            sets = ", ".join(f"{c}=?" for c in updates)
            txn.db.execute(
                f"UPDATE runs SET {sets} WHERE run_id=?", [*updates.values(), run.run_id]
            )
    for key, value in run.tags.items():
        set_tag(txn, "run", run.run_id, key, value)
    if run.context:
        merge_context(txn, run.run_id, run.context)
    return created


def set_tag(txn: Transaction, scope_type: str, scope_id: str, key: str, value: str) -> bool:
    return txn.ensure(
        "tags",
        {"scope_type": scope_type, "scope_id": scope_id, "key": key, "value": str(value)},
        ["scope_type", "scope_id", "key"],
    )


def merge_context(txn: Transaction, run_id: str, context: dict[str, Any]) -> None:
    """Fill empty fields, union list-like fields, overwrite numeric ones (never conflicts)."""
    known = set(schema.columns("run_context")) - {"run_id"}
    unknown = sorted(set(context) - known)
    if unknown:
        raise ValidationError(
            f"unknown run context field(s): {', '.join(unknown)}",
            hint=f"known fields: {', '.join(sorted(known))}",
            owner="the caller writing the record",
        )
    existing = txn.fetch("run_context", {"run_id": run_id})
    if existing is None:
        txn.insert("run_context", {"run_id": run_id, **context})
        return
    updates: dict[str, Any] = {}
    for key, value in context.items():
        if value in (None, ""):
            continue
        old = existing[key]
        if key in CONTEXT_FLOATS or key == "gpu_count":
            if old != value:
                updates[key] = value
        elif key in CONTEXT_LISTS:
            items = [i for i in str(old or "").split(",") if i]
            items += [i for i in str(value).split(",") if i and i not in items]
            if ",".join(items) != (old or ""):
                updates[key] = ",".join(items)
        elif not old:
            updates[key] = value
    if updates:
        sets = ", ".join(f"{c}=?" for c in updates)
        txn.db.execute(f"UPDATE run_context SET {sets} WHERE run_id=?", [*updates.values(), run_id])


# -- configs -----------------------------------------------------------------------------


def config_row(path: Path, run_id: str, fmt: str = "") -> dict[str, Any]:
    """Normalize a config file to canonical JSON; its hash identifies the settings."""
    fmt = fmt or {".json": "json", ".yaml": "yaml", ".yml": "yaml"}.get(path.suffix.lower(), "raw")
    try:
        text = path.read_text()
    except OSError as error:
        raise ValidationError(f"--config {path}: {error.strerror}", owner="the user") from None
    try:
        if fmt == "json":
            value: Any = json.loads(text)
        elif fmt == "yaml":
            from tau import safeyaml

            value = safeyaml.load(text)
        else:
            value = text
    except ValueError as error:
        raise ValidationError(
            f"--config {path}: not valid {fmt}: {error}", owner="the user"
        ) from None
    normalized = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    flat: dict[str, Any] = {}
    _flatten("", value, flat)
    return {
        "config_hash": hashlib.sha256(normalized.encode()).hexdigest(),
        "run_id": run_id,
        "format": fmt,
        "uri": str(path),
        "normalized_json": normalized,
        "indexed_fields": json.dumps(flat, sort_keys=True, default=str),
    }


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), item, out)
    elif prefix and (value is None or isinstance(value, str | int | float | bool)):
        out[prefix] = value


def combined_config_hash(hashes: list[str]) -> str:
    if len(hashes) == 1:
        return hashes[0]
    return hashlib.sha256("\n".join(sorted(hashes)).encode()).hexdigest()


# -- artifacts ---------------------------------------------------------------------------

ARTIFACT_SPEC_KEYS = (
    "type",
    "name",
    "uri",
    "preview",
    "external_ref",
    "caption",
    "direction",
    "alias",
    "source_artifact_id",
    "source_run_id",
    "source_dataset_name",
    "source_dataset_version",
    "source_dataset_digest",
    "step",
)
_TYPE_BY_EXT = {
    "plot": ("png", "jpg", "jpeg", "svg", "gif"),
    "video": ("mp4", "mov", "webm"),
    "checkpoint": ("pt", "pth", "ckpt", "safetensors"),
    "log": ("log", "txt"),
    "manifest": ("json", "yaml", "yml"),
    "table": ("csv", "tsv", "parquet"),
}


def guess_artifact_type(uri: str) -> str:
    ext = uri.rsplit(".", 1)[-1].lower() if "." in uri.rsplit("/", 1)[-1] else ""
    for kind, exts in _TYPE_BY_EXT.items():
        if ext in exts:
            return kind
    return "other"


def parse_artifact_spec(spec: str) -> dict[str, Any]:
    """`URI`, `type:name=URI`, `name=URI`, or a JSON object with the artifact fields."""
    text = spec.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError as error:
            raise ValidationError(
                f"--artifact {spec!r}: invalid JSON ({error})", owner="the user"
            ) from None
        unknown = sorted(set(value) - set(ARTIFACT_SPEC_KEYS))
        if unknown or not value.get("uri"):
            raise ValidationError(
                "--artifact JSON needs 'uri' and only known keys "
                f"(unknown: {', '.join(unknown) or '-'})",
                owner="the user",
            )
        return dict(value)
    head, sep, uri = text.partition("=")
    if not sep or "://" in head:
        return {"uri": text}
    kind, colon, name = head.partition(":")
    return {"type": kind, "name": name, "uri": uri} if colon else {"name": head, "uri": uri}


def artifact_row(run_id: str, spec: dict[str, Any], base_dir: Path | None = None) -> dict[str, Any]:
    uri = str(spec["uri"])
    kind = spec.get("type") or guess_artifact_type(uri)
    name = spec.get("name") or uri.rstrip("/").rsplit("/", 1)[-1]
    direction = spec.get("direction") or "output"
    if direction not in ("input", "output"):
        raise ValidationError(
            f"artifact direction {direction!r} must be input or output", owner="the user"
        )
    step = spec.get("step")
    ident = "\0".join([run_id, kind, name, uri, direction, "" if step is None else str(step)])
    row: dict[str, Any] = {
        "artifact_id": f"artifact-{run_id}-{hashlib.sha256(ident.encode()).hexdigest()[:12]}",
        "run_id": run_id,
        "type": kind,
        "uri": uri,
        "name": name,
        "durable_ref": "",
        "content_type": "",
        "digest": "",
        "size_bytes": None,
        "step": step,
        "tags": "",
        "rank": None,
        "created_at": now(),
        "preview": spec.get("preview") or "",
        "external_ref": spec.get("external_ref") or "",
        "caption": spec.get("caption") or "",
        "direction": direction,
    }
    for key in ("alias", "source_artifact_id", "source_run_id", "source_dataset_name"):
        row[key] = spec.get(key)
    row["source_dataset_version"] = spec.get("source_dataset_version")
    row["source_dataset_digest"] = spec.get("source_dataset_digest")
    if not isinstance(row["preview"], str):
        row["preview"] = json.dumps(row["preview"], sort_keys=True)
    local = _local_path(uri, base_dir)
    if local is not None and local.is_file():
        row["digest"] = "sha256:" + file_sha256(local)
        row["size_bytes"] = local.stat().st_size
    return row


def _local_path(uri: str, base_dir: Path | None) -> Path | None:
    if uri.startswith("file://"):
        return Path(uri[len("file://") :])
    if "://" in uri:
        return None
    path = Path(uri)
    return path if path.is_absolute() or base_dir is None else base_dir / path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def record_artifact(txn: Transaction, row: dict[str, Any]) -> bool:
    compare = [c for c in row if c not in ("artifact_id", "created_at")]
    return txn.ensure("artifacts", row, ["artifact_id"], compare=compare)


# -- tag-run -----------------------------------------------------------------------------


def tag_run(
    root: Path | str,
    run_id: str,
    *,
    experiment_id: str,
    name: str = "",
    description: str = "",
    idempotency_key: str = "",
) -> dict[str, Any]:
    """Attach a run to an experiment, creating the experiment when needed."""
    check_id("experiment", experiment_id, flag="--experiment")
    store = Store.open(root)
    with store.mutate() as txn:
        run = txn.fetch("runs", {"run_id": run_id})
        if run is None:
            raise ValidationError(
                f"run {run_id!r} is not in the store {store.root}",
                hint="track or import the run first",
                owner="the user",
            )
        req = request_hash({"run": run_id, "experiment": experiment_id, "name": name})
        if txn.claim_key(
            idempotency_key,
            command="tag-run",
            target_type="run",
            target_id=run_id,
            request_hash=req,
        ):
            return {"run_id": run_id, "experiment_id": experiment_id, "reused": True}
        created = ensure_experiment(
            txn, experiment_id, run["project"], name=name or experiment_id, description=description
        )
        changed = run["experiment_id"] != experiment_id
        if changed:
            txn.db.execute(
                "UPDATE runs SET experiment_id=? WHERE run_id=?", (experiment_id, run_id)
            )
    return {
        "run_id": run_id,
        "experiment_id": experiment_id,
        "experiment_created": created,
        "reused": not (created or changed),
    }

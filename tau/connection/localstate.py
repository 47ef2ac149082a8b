"""Per-user state under the Tau config dir: pins, local assignments, the readiness cache.

Layout (`$TAU_CONFIG_DIR`, else `~/.config/tau`; every file 0600 in 0700 dirs, written
atomically so a crash never leaves half a pin):

    connections/<workspace>-<h(access)>-<h(trust)>.json   connection pin + last verification
    kubeconfigs/<ctx>-<h(access)>-<h(trust)>-<digest12>.yaml   isolated kubeconfig
    assignments/<project|repository>-<hex16>.json          local assignment of one checkout
    active-workspace.json                                  last resolved workspace placement

The pin records what a human approved (descriptor digest, trust identity, kube target,
workspace UID, namespace, queue); anything that differs later is drift and goes back to a
human. Readiness evidence is short-lived (5 minutes) and refreshed without asking.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from tau import atomicfile
from tau.api.connection import WorkspaceConnection
from tau.connection.descriptor import ConnectionSource, Repository, is_within
from tau.errors import RuntimeFailure, TauError, UsageError, ValidationError
from tau.jsontypes import JSONObject
from tau.keys import ENV_CONFIG_DIR, ENV_XDG_CONFIG_HOME

READINESS_TTL = timedelta(minutes=5)
STATE_SCHEMA = "tau.workspace.connection-state.v1"
ASSIGNMENT_SCHEMA = "tau.workspace.assignment.v1"
ACTIVE_SCHEMA = "tau.active-workspace.v1"
STATE_OWNER = "researcher (local Tau state)"


def config_dir() -> Path:
    configured = os.environ.get(ENV_CONFIG_DIR, "").strip()
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get(ENV_XDG_CONFIG_HOME, "").strip() or os.path.join("~", ".config")
    return Path(base).expanduser() / "tau"


def _unwritable(path: Path, error: OSError) -> RuntimeFailure:
    return RuntimeFailure(
        f"local state: cannot write {path} ({error.strerror or type(error).__name__})",
        hint=f"make it writable, or point ${ENV_CONFIG_DIR} at a private directory",
        owner=STATE_OWNER,
    )


def private_dir(path: Path) -> Path:
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(path, 0o700)
    except OSError as error:
        raise _unwritable(path, error) from None
    return path


def write_private(path: Path, data: bytes) -> None:
    """Atomically replace `path` with `data`, mode 0600, inside a 0700 directory."""
    private_dir(path.parent)
    try:
        atomicfile.write_bytes(path, data, mode=0o600)
    except OSError as error:
        raise _unwritable(path, error) from None


def write_json(path: Path, data: JSONObject) -> None:
    write_private(path, (json.dumps(data, indent=2) + "\n").encode())


def safe_filename(value: str) -> str:
    cleaned = re.sub(r"[^a-z0-9\-_.]", "-", value.lower()).strip("-.")
    return cleaned or "connection"


def short_hash(value: str) -> str:
    return hashlib.sha256(value.strip().encode()).hexdigest()[:12]


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


# --- local assignments -----------------------------------------------------------------------


class Assignment(BaseModel):
    """A non-secret connection contract stored for exactly one worktree/project."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    schema_: str
    repositoryRoot: str
    realRepositoryRoot: str
    project: str | None = None
    projectRoot: str
    realProjectRoot: str
    descriptor: dict[str, Any]
    workspaceUID: str | None = None
    source: str
    assignedAt: str


class LoadedAssignment:
    def __init__(self, record: Assignment, descriptor: WorkspaceConnection, path: Path):
        self.record = record
        self.descriptor = descriptor
        self.path = path


def assignment_path(
    repository: Repository, project: str | None = None, base: Path | None = None
) -> Path:
    root = repository.real_root
    key = f"{root}\0{project or ''}\0{root}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    name = f"{safe_filename(project) if project else 'repository'}-{digest}.json"
    return (base or config_dir()) / "assignments" / name


def load_assignment(
    repository: Repository, project: str | None = None, *, config_dir: Path | None = None
) -> LoadedAssignment | None:
    """This worktree's assignment, or None. A record naming another worktree is refused."""
    path = assignment_path(repository, project, config_dir)
    if not path.exists():
        return None
    where = f"local assignment {path}"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        raw["schema_"] = raw.pop("schema")
        record = Assignment.model_validate(raw)
    except (OSError, ValueError, KeyError, PydanticValidationError):
        raise ValidationError(
            f"descriptor: {where} is unreadable or malformed",
            hint="run `tau workspace connection clear` and assign again",
            owner=STATE_OWNER,
        ) from None
    if record.schema_ != ASSIGNMENT_SCHEMA:
        raise ValidationError(f"descriptor: {where} has unknown schema", owner=STATE_OWNER)
    roots = (
        record.repositoryRoot,
        record.realRepositoryRoot,
        record.projectRoot,
        record.realProjectRoot,
    )
    if not all(Path(root).is_absolute() for root in roots) or not is_within(
        Path(record.realProjectRoot), Path(record.realRepositoryRoot)
    ):
        raise ValidationError(f"descriptor: {where} has invalid roots", owner=STATE_OWNER)
    if Path(record.realRepositoryRoot) != repository.real_root or record.project != project:
        raise ValidationError(
            f"descriptor: {where} belongs to another worktree ({record.realRepositoryRoot})",
            hint="assignments never apply across worktrees; assign this checkout separately",
            owner=STATE_OWNER,
        )
    from tau.api.connection import validate_descriptor

    descriptor = validate_descriptor(record.descriptor, where)
    return LoadedAssignment(record, descriptor, path)


def save_assignment(
    repository: Repository,
    descriptor: WorkspaceConnection,
    *,
    project: str | None = None,
    project_root: Path | None = None,
    workspace_uid: str | None = None,
    replace: bool = False,
    config_dir: Path | None = None,
) -> tuple[Path, bool]:
    """Store the assignment; returns (path, changed). A different one needs `replace`."""
    path = assignment_path(repository, project, config_dir)
    existing = load_assignment(repository, project, config_dir=config_dir)
    if existing is not None:
        same = existing.descriptor.digest == descriptor.digest and (
            existing.record.workspaceUID == workspace_uid
        )
        if same:
            return path, False
        if not replace:
            raise UsageError(
                "project already has a local workspace assignment to "
                f"{existing.descriptor.workspace!r}; rerun with --replace"
            )
    root = project_root or repository.root
    record = {
        "schema": ASSIGNMENT_SCHEMA,
        "repositoryRoot": str(repository.root),
        "realRepositoryRoot": str(repository.real_root),
        "project": project,
        "projectRoot": str(root),
        "realProjectRoot": str(root.resolve()),
        "descriptor": descriptor.to_dict(),
        "workspaceUID": workspace_uid,
        "source": "tau workspace connection assign",
        "assignedAt": rfc3339(now()),
    }
    write_json(path, {key: value for key, value in record.items() if value is not None})
    return path, True


def clear_assignment(
    repository: Repository, project: str | None = None, *, config_dir: Path | None = None
) -> Path | None:
    path = assignment_path(repository, project, config_dir)
    if not path.exists():
        return None
    path.unlink()
    return path


# --- connection pins and readiness evidence ----------------------------------------------------


class ConnectionState(BaseModel):
    """What was approved and last verified for one (workspace, access, checkout)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    schema_: str = STATE_SCHEMA
    workspace: str
    access_method: str
    access_identity: str
    access_fingerprint: str | None = None
    authorization_mode: str
    context_name: str
    system_namespace: str
    kubeconfig_path: str
    namespace: str
    queue: str
    cluster_queue: str | None = None
    service_account: str | None = None
    required_role: str = ""
    repository_root: str
    descriptor_path: str
    descriptor_digest: str
    workspace_uid: str
    configured_at: str
    verified_at: str

    def dump(self) -> JSONObject:
        data = self.model_dump(exclude_none=True)
        del data["schema_"]
        return {"schema": STATE_SCHEMA, **data}


def state_path(source: ConnectionSource, base: Path | None = None) -> Path:
    descriptor = source.descriptor
    key = f"{safe_filename(descriptor.workspace)}-{short_hash(descriptor.access_identity)}"
    key += f"-{short_hash(source.trust_identity)}"
    return (base or config_dir()) / "connections" / f"{key}.json"


def kubeconfig_path(source: ConnectionSource, base: Path | None = None) -> Path:
    descriptor = source.descriptor
    name = "-".join(
        (
            safe_filename(descriptor.context_name),
            short_hash(descriptor.access_identity),
            short_hash(source.trust_identity),
            descriptor.digest.removeprefix("sha256:")[:12],
        )
    )
    return (base or config_dir()) / "kubeconfigs" / f"{name}.yaml"


def load_state(path: Path) -> ConnectionState | None:
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("schema") not in (STATE_SCHEMA, "tau.workspace.connection-state.v2"):
            raise ValueError("schema")
        raw["schema_"] = STATE_SCHEMA
        return ConnectionState.model_validate(raw)
    except (OSError, ValueError, PydanticValidationError):
        raise ValidationError(
            f"access: connection pin {path} is unreadable or malformed",
            hint="delete it and rerun `tau workspace connection` (it is rebuilt after review)",
            owner=STATE_OWNER,
        ) from None


def save_state(path: Path, state: ConnectionState) -> None:
    write_json(path, state.dump())


def pin_changes(state: ConnectionState, source: ConnectionSource, fingerprint: str) -> list[str]:
    """Differences between what was approved and what the checkout asks for now."""
    descriptor = source.descriptor
    changes: list[str] = []

    def compare(label: str, old: str | None, new: str | None) -> None:
        if (old or "") != (new or ""):
            changes.append(f"{label} {old or '<none>'!r} -> {new or '<none>'!r}")

    compare("workspace", state.workspace, descriptor.workspace)
    compare("access method", state.access_method, descriptor.access.method)
    if state.access_identity != descriptor.access_identity:
        changes.append("access identity changed")
    compare("Kubernetes context", state.context_name, descriptor.context_name)
    compare("system namespace", state.system_namespace, descriptor.system_namespace)
    compare("authorization mode", state.authorization_mode, descriptor.authorization.mode)
    compare("required role", state.required_role, descriptor.authorization.requiredRole)
    if Path(state.repository_root) != source.repository.real_root:
        changes.append("repository trust identity changed")
    if Path(state.descriptor_path) != source.path.resolve():
        changes.append("descriptor trust target changed")
    if state.descriptor_digest != descriptor.digest:
        changes.append("descriptor digest changed")
    if state.access_fingerprint and fingerprint and state.access_fingerprint != fingerprint:
        changes.append("Kubernetes context target changed")
    if not state.configured_at:
        changes.append("configuration timestamp is missing")
    if not state.workspace_uid:
        changes.append("workspace UID pin is missing")
    return changes


def contract_changes(
    state: ConnectionState, uid: str, namespace: str, queue: str, service_account: str
) -> list[str]:
    """Live workspace contract vs the pin (an empty ServiceAccount compares as `default`)."""
    changes: list[str] = []
    if state.workspace_uid != uid:
        changes.append("workspace UID changed (the TauWorkspace was recreated)")
    if state.namespace != namespace:
        changes.append(f"namespace {state.namespace!r} -> {namespace!r}")
    if state.queue != queue:
        changes.append(f"LocalQueue {state.queue!r} -> {queue!r}")
    if (state.service_account or "default") != (service_account or "default"):
        changes.append(
            f"service account {state.service_account or 'default'!r} -> "
            f"{service_account or 'default'!r}"
        )
    return changes


def cached_connections(base: Path | None = None) -> list[ConnectionState]:
    """Every usable pin on this machine (how `tau logs` searches configured workspaces).

    Pins missing the workspace UID or configuration time are skipped; unknown schemas are an
    error. Newest verification first within a workspace.
    """
    states = []
    for path in sorted(((base or config_dir()) / "connections").glob("*.json")):
        state = load_state(path)
        if state is not None and state.workspace_uid and state.configured_at:
            states.append(state)
    states.sort(
        key=lambda s: (
            s.workspace,
            s.workspace_uid,
            _desc(s.verified_at),
            _desc(s.configured_at),
            s.context_name,
            s.namespace,
            s.kubeconfig_path,
        )
    )
    return states


def _desc(stamp: str) -> tuple[int, ...]:
    moment = parse_time(stamp)
    return (-int(moment.timestamp()),) if moment else (0,)


def is_fresh(state: ConnectionState, ttl: timedelta = READINESS_TTL) -> bool:
    verified = parse_time(state.verified_at)
    if verified is None or ttl < timedelta(0):
        return False
    return now() - verified <= ttl


def write_active_workspace(state: ConnectionState, base: Path | None = None) -> Path:
    path = (base or config_dir()) / "active-workspace.json"
    write_json(
        path,
        {
            "schema": ACTIVE_SCHEMA,
            "workspace": state.workspace,
            "workspaceUID": state.workspace_uid,
            "contextName": state.context_name,
            "systemNamespace": state.system_namespace,
            "namespace": state.namespace,
            "localQueue": state.queue,
            "clusterQueue": state.cluster_queue or "",
            "repositoryRoot": state.repository_root,
            "descriptorPath": state.descriptor_path,
            "descriptorDigest": state.descriptor_digest,
            "resolvedAt": state.verified_at,
        },
    )
    return path


class ReviewRequired(TauError):
    """A change that only a human at a terminal may approve (exit 2: nothing was changed)."""

    exit_code = 2


def review_error(reason: str, changes: list[str]) -> ReviewRequired:
    detail = "; ".join(changes) if changes else reason
    return ReviewRequired(
        f"workspace connection requires interactive review: {reason} ({detail})",
        hint="run `tau workspace connection` from an interactive terminal to review and approve",
        owner="researcher (approve the change) or platform operator (if it is unexpected)",
    )

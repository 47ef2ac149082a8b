"""The layer stack of a direct run's resolution, and how competing layers merge.

The order is the documented contract (lowest to highest): repository discovery, the
connection descriptor, TauWorkspace defaults, the workload profile, the checked-in run
config, explicit CLI flags. Platform-owned values (workspace namespace and queue, profile
GPU counts and priorities) are authoritative: a config or flag that disagrees is an
ambiguity and an error, never a silent pick. Every value that reaches the intent is
recorded with its source so dry-run can show it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from tau.errors import ValidationError
from tau.resolve.provenance import Layer, Source, field_path
from tau.resolve.provenance import Provenance as ProvenanceTable
from tau.runconfig.models import RunConfig

if TYPE_CHECKING:
    from tau.runconfig.loader import LoadedConfig

T = TypeVar("T")

RESEARCHER = "researcher: tau.yaml"
PLATFORM = "platform team"

PLACEHOLDER_NAMESPACE = "tau-unresolved-namespace"
PLACEHOLDER_QUEUE = "tau-unresolved-local-queue"
PLACEHOLDER_SERVICE_ACCOUNT = "tau-unresolved-service-account"


@dataclass(frozen=True)
class Overrides:
    """Explicit CLI flags: the highest layer."""

    namespace: str = ""
    workspace: str = ""
    context: str = ""
    service_account: str = ""
    run_name: str = ""
    dry_run: str = ""
    # runtime.env_kv (managed workflows only).
    key_vault: str = ""
    tenant_id: str = ""
    workload_identity_client_id: str = ""


@dataclass(frozen=True)
class DescriptorLayer:
    """The checked-in `tau/workspace.connection.yaml` (from the workspace engineer's loader)."""

    path: str
    workspace: str
    context: str


@dataclass(frozen=True)
class WorkspaceLayer:
    """Defaults published by a Ready TauWorkspace."""

    name: str
    namespace: str | None = None
    queue: str | None = None
    priority_tier: str | None = None
    output_root: str | None = None
    service_account: str | None = None
    workload_identity: bool = False
    retention_seconds: int | None = None
    workspace_id: str | None = None
    result_scope: str | None = None
    # The Pod Security level the workspace namespace enforces, as its controller observed it.
    pod_security: str | None = None


@dataclass(frozen=True)
class ProfileLayer:
    """The selected, ready workload profile (from TauCluster status or a snapshot)."""

    name: str
    origin: str
    gpus_per_worker: int
    worker_count: int
    placement: str = "independent"
    mode: str = "fixed"
    queue: str | None = None
    workload_priority_class: str | None = None
    pod_priority_class: str | None = None
    disable_default_priorities: bool = False
    cluster_generation: int | None = None
    profile_set_hash: str | None = None
    topology_aware: bool = False
    # Each ResourceFlavor of the profile's queues and its tau.azure.com/gpu-class ("" when the
    # flavor carries none); None when the status publishes no classes (an older controller).
    flavor_gpu_classes: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class ConfigLayer:
    """The checked-in run config: a validated direct config and where each field was written."""

    loaded: LoadedConfig

    @property
    def model(self) -> RunConfig:
        config = self.loaded.config
        assert isinstance(config, RunConfig)  # managed manifests resolve in tau.resolve.workflow
        return config

    @property
    def path(self) -> Path:
        return Path(self.loaded.path)

    @property
    def config_hash(self) -> str:
        return self.loaded.config_hash

    def is_set(self, block: type[BaseModel], name: str) -> bool:
        """Whether the file wrote the field, as opposed to it taking its default."""
        return self.loaded.is_set(field_path(block, name))

    def source(self, block: type[BaseModel], name: str, *keys: str) -> Source:
        dotted = field_path(block, name, *keys)
        where = self.loaded.where(dotted)
        return Source(Layer.FILE, where or f"{self.path} ({dotted})")


@dataclass
class Stack:
    """One resolution's layers, and the record of which layer set each resolved value."""

    config: ConfigLayer
    flags: Overrides = Overrides()
    descriptor: DescriptorLayer | None = None
    workspace: WorkspaceLayer | None = None
    profile: ProfileLayer | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    table: ProvenanceTable = field(default_factory=ProvenanceTable)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)

    @property
    def model(self) -> RunConfig:
        return self.config.model

    @property
    def client_dry_run(self) -> bool:
        return self.flags.dry_run == "client"

    def record(self, name: str, value: T, source: Source) -> T:
        return self.table.record(name, value, source)

    def file(self, block: type[BaseModel], name: str, *keys: str) -> Source:
        return self.config.source(block, name, *keys)

    def flag(self, name: str) -> Source:
        return Source(Layer.FLAG, name)

    def ws(self, what: str) -> Source:
        assert self.workspace is not None
        return Source(Layer.WORKSPACE, f"TauWorkspace {self.workspace.name} {what}")

    def prof(self, what: str) -> Source:
        assert self.profile is not None
        return Source(Layer.PROFILE, f"{self.profile.name} {what}, {self.profile.origin}")

    def default(self, what: str = "") -> Source:
        return Source(Layer.DEFAULT, what)

    def unresolved(self, name: str, placeholder: str, how: str) -> str:
        """A value no layer provides: an error, except in a client dry-run, which renders a
        self-describing placeholder and says so once."""
        if not self.client_dry_run:
            raise ValidationError(
                f"{name} is unresolved: no flag, run config, workspace or profile provides it",
                hint=how,
                owner=RESEARCHER,
            )
        self.placeholders.append(name)
        return self.record(name, placeholder, Source(Layer.UNRESOLVED, how))


def agree(what: str, candidates: list[tuple[str, Source]]) -> tuple[str, Source] | None:
    """The single value all layers agree on; two different values is an ambiguity error.

    `candidates` come highest layer first: that layer is the recorded source.
    """
    if not candidates:
        return None
    distinct = {value for value, _ in candidates}
    if len(distinct) > 1:
        listing = ", ".join(f"{value!r} from {source}" for value, source in candidates)
        raise ValidationError(
            f"{what} is ambiguous: {listing}",
            hint="make the layers agree or remove the override",
            owner=RESEARCHER,
        )
    return candidates[0]


def choose_namespace(
    explicit: list[tuple[str, Source]], workspace: WorkspaceLayer | None
) -> tuple[str, Source] | None:
    """The explicit namespace (flag first, then the file), for direct configs and managed
    workflows alike; it must be the workspace's target. None leaves the choice to the target."""
    target = workspace.namespace if workspace else None
    for value, source in explicit:
        if workspace and target and value != target:
            raise ValidationError(
                f"namespace {value!r} ({source}) conflicts with TauWorkspace "
                f"{workspace.name!r} target namespace {target!r}",
                hint="remove the override or select the matching workspace",
                owner=RESEARCHER,
            )
    return explicit[0] if explicit else None

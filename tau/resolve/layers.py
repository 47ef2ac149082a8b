"""Layered resolution of a run: checked-in intent + platform context → `RunIntent`.

The order is the documented contract (lowest to highest): repository discovery, the
connection descriptor, TauWorkspace defaults, the workload profile, the checked-in run
config, explicit CLI flags. Platform-owned values (workspace namespace and queue, profile
GPU counts and priorities) are authoritative: a config or flag that disagrees is an
ambiguity and an error, never a silent pick. Every value that reaches the intent is
recorded with its source so dry-run can show it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tau import keys
from tau.errors import UsageError, ValidationError
from tau.render.intent import (
    Engine,
    Experiment,
    ImageAsset,
    MetricsOffload,
    Mount,
    Placement,
    Project,
    Provenance,
    PvcVolume,
    Resources,
    RunIntent,
    Script,
    SecretRef,
    SourceImage,
    Tune,
)
from tau.resolve.provenance import Layer, Source
from tau.resolve.provenance import Provenance as ProvenanceTable
from tau.runconfig.models import PLACEMENT_EQUIVALENT
from tau.version import __version__

T = TypeVar("T")

RESEARCHER = "researcher: tau.yaml"
PLATFORM = "platform team"

PRIORITY_CLASS_BY_TIER = {"default": keys.DEFAULT_PRIORITY_CLASS, "priority": keys.PRIORITY_CLASS}
DEFAULT_OUTPUT_ROOT = "/data/checkpoints/workflows"
DEFAULT_RAY_GPU_IMAGE = "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.56.0-cuda13.0"
DEFAULT_RAY_CPU_IMAGE = "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.54.0"
# This project's runtime image (docker/runtime.Containerfile: Python, tau, Ray): the offload
# sidecar's image when neither the run config nor the platform names one.
DEFAULT_RUNTIME_IMAGE = f"mcr.microsoft.com/aks/ai-runtime/tau:{__version__}"
DEFAULT_OFFLOAD_SOURCE = "stellar-online"
DEFAULT_OFFLOAD_INTERVAL = "2s"

PLACEHOLDER_NAMESPACE = "tau-unresolved-namespace"
PLACEHOLDER_QUEUE = "tau-unresolved-local-queue"
PLACEHOLDER_SERVICE_ACCOUNT = "tau-unresolved-service-account"

# Kueue podset topology per placement. Profiles publish the v0.5 names, run configs the
# newer ones; `unconstrained` still opts the podset into topology-aware scheduling, so it
# is only rendered when the profile reports topology-aware flavors.
PLACEMENT_TOPOLOGY = {
    "independent": (keys.KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    "elastic-workers": (keys.KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    "multi-node-nccl": (keys.KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    "single-node-nvlink": (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.HOSTNAME_LABEL),
    "unconstrained": (keys.KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    "same-host": (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.HOSTNAME_LABEL),
    "same-network-domain": (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.NETWORK_DOMAIN),
    "same-site": (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.SITE),
}
_SHAPE_COUNT = re.compile(r"^(\d+)x")


def _placement(value: str | None) -> str | None:
    """One spelling per placement, so `same-host` agrees with a `single-node-nvlink` profile."""
    return PLACEMENT_EQUIVALENT.get(value or "", value)


# --- Layer inputs -----------------------------------------------------------------------------


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


@dataclass(frozen=True)
class ConfigLayer:
    """The checked-in run config: a validated `tau.runconfig.LoadedConfig` (direct config)."""

    loaded: Any

    @property
    def model(self) -> Any:
        return self.loaded.config

    @property
    def path(self) -> Path:
        return Path(self.loaded.path)

    @property
    def config_hash(self) -> str:
        config_hash: str = self.loaded.config_hash
        return config_hash

    def is_set(self, dotted: str) -> bool:
        is_set: bool = self.loaded.is_set(dotted)
        return is_set

    def source(self, dotted: str) -> Source:
        where = self.loaded.where(dotted)
        return Source(Layer.FILE, where or f"{self.path} ({dotted})")


@dataclass
class Resolution:
    intent: RunIntent
    provenance: ProvenanceTable
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    context: str = ""


# --- Resolution -------------------------------------------------------------------------------


def resolve_run(
    config: ConfigLayer,
    *,
    overrides: Overrides = Overrides(),
    descriptor: DescriptorLayer | None = None,
    workspace: WorkspaceLayer | None = None,
    profile: ProfileLayer | None = None,
    env: Mapping[str, str] | None = None,
    code_sha: str | None = None,
    argv: tuple[str, ...] = (),
    submission_id: str | None = None,
    new_id: Callable[[], str] | None = None,
) -> Resolution:
    """Merge every layer into one intent; raise on ambiguity, record every source."""
    return _Resolver(
        config,
        overrides,
        descriptor,
        workspace,
        profile,
        dict(env or {}),
        code_sha,
        argv,
        submission_id,
        new_id,
    ).run()


class _Resolver:
    def __init__(
        self,
        config: ConfigLayer,
        overrides: Overrides,
        descriptor: DescriptorLayer | None,
        workspace: WorkspaceLayer | None,
        profile: ProfileLayer | None,
        env: dict[str, str],
        code_sha: str | None,
        argv: tuple[str, ...],
        submission_id: str | None,
        new_id: Callable[[], str] | None,
    ) -> None:
        self.config = config
        self.model = config.model
        self.flags = overrides
        self.descriptor = descriptor
        self.workspace = workspace
        self.profile = profile
        self.env = env
        self.code_sha = code_sha
        self.argv = argv
        self.submission_id = submission_id
        self.new_id = new_id or _random_id
        self.table = ProvenanceTable()
        self.warnings: list[str] = []
        self.notes: list[str] = []
        self.placeholders: list[str] = []

    # helpers

    @property
    def client_dry_run(self) -> bool:
        return self.flags.dry_run == "client"

    def file(self, dotted: str) -> Source:
        return self.config.source(dotted)

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

    def block(self, name: str) -> Any:
        return getattr(self.model, name, None)

    def get(self, dotted: str) -> Any:
        node: Any = self.model
        for part in dotted.split("."):
            node = getattr(node, part, None) if node is not None else None
        return node

    def record(self, name: str, value: T, source: Source) -> T:
        return self.table.record(name, value, source)

    def resolve_restricted(self) -> bool:
        """runtime.security.mode, else restricted when the workspace namespace enforces Pod
        Security `restricted` (its pods would be refused otherwise)."""
        mode: str | None = self.get("runtime.security.mode")
        if mode:
            self.record("runtime.security.mode", mode, self.file("runtime.security.mode"))
            return mode == "restricted"
        if self.workspace and self.workspace.pod_security == "restricted":
            source = self.ws("namespace enforces Pod Security restricted")
            self.record("runtime.security.mode", "restricted", source)
            return True
        return False

    # the pipeline

    def run(self) -> Resolution:
        name = self.resolve_name()
        engine = self.resolve_engine()
        context = self.resolve_context()
        workspace_name = self.resolve_workspace_name()
        namespace = self.resolve_namespace()
        self.check_snapshot_scope()
        placement = self.resolve_placement(engine)
        gpus, workers, gpus_per_worker, nodes = self.resolve_counts(engine)
        image = self.resolve_image(engine, gpus_per_worker)
        service_account = self.resolve_service_account()
        volumes, mounts = self.resolve_storage(engine)
        data_mounted = any(mount.path == "/data" for mount in mounts)
        output = self.resolve_output(name, data_mounted)
        launcher = self.model.launcher_value
        launcher_explicit = bool(self.get("execution.launcher"))
        self.record(
            "execution.launcher",
            launcher,
            self.file("execution.launcher") if launcher_explicit else self.default(engine),
        )
        execution = self.block("execution")
        processes = execution.processes_per_node if execution else 1
        if launcher == "torchrun":
            self.record(
                "execution.processes_per_node",
                processes,
                self.file("execution.processes_per_node")
                if self._explicit("execution", "processes_per_node")
                else self.default(),
            )
        restricted = self.resolve_restricted()
        for dotted in (
            "runtime.working_dir",
            "storage.publish",
            "storage.checkpoint",
            "run.source.path",
        ):
            if self.get(dotted):
                self.record(dotted, self.get(dotted), self.file(dotted))
        ttl = self.resolve_ttl(engine)
        experiment = self.resolve_experiment()
        staged = self.get("storage.publish") == "staged"
        intent = RunIntent(
            name=name,
            namespace=namespace,
            engine=engine,
            launcher=launcher,
            launcher_explicit=launcher_explicit,
            image=image,
            placement=placement,
            provenance=Provenance(
                config_hash=self.config.config_hash,
                code_sha=self.code_sha,
                tau_command=self.argv,
                submission_id=self.submission_id,
            ),
            script=self.resolve_script(),
            source=self.resolve_source(),
            project=self.resolve_project(),
            source_entrypoint=self.model.entrypoint_value if self.get("run.source") else None,
            configs=self.resolve_configs(),
            nodes=nodes,
            processes_per_node=processes,
            gpus=gpus,
            workers=workers,
            gpus_per_worker=gpus_per_worker,
            gpu_resource=self.resolve_gpu_resource(),
            resources=self.resources(""),
            head_resources=self.resources("head_"),
            worker_resources=self.resources("worker_"),
            env=self.resolve_env(),
            env_secret=self.resolve_env_secret(),
            pip=tuple(self.get("runtime.pip") or ()),
            volumes=volumes,
            mounts=mounts,
            output=output,
            staged_publish=staged,
            publication_id=self.new_id() if staged and not self.flags.dry_run else None,
            checkpoint=self.get("storage.checkpoint"),
            image_assets=self.resolve_assets(),
            working_dir=self.get("runtime.working_dir"),
            restricted=restricted,
            service_account=service_account,
            workload_identity=bool(self.workspace and self.workspace.workload_identity),
            ttl_seconds_after_finished=ttl,
            workspace=workspace_name,
            workspace_id=self.workspace.workspace_id if self.workspace else None,
            result_scope=self.workspace.result_scope if self.workspace else None,
            experiment=experiment,
            tune=self.resolve_tune(launcher),
            metrics_offload=self.resolve_offload(output),
            allow_nccl_override=bool(self.get("execution.allow_nccl_override")),
        )
        if self.placeholders:
            self.warnings.append(
                "client dry-run could not resolve "
                + ", ".join(self.placeholders)
                + "; rendered self-describing placeholders (connect a workspace with "
                "tau/workspace.connection.yaml or set them explicitly)"
            )
        return Resolution(intent, self.table, self.warnings, self.notes, self.placeholders, context)

    # --- identity -----------------------------------------------------------------------------

    def resolve_name(self) -> str:
        if self.flags.run_name:
            return self.record("name", self.flags.run_name, self.flag("TARGET name"))
        name: str | None = self.model.run_name
        if not name:
            raise ValidationError(
                f"{self.config.path}: name is required",
                hint="set name: in the run config",
                owner=RESEARCHER,
            )
        dotted = "run.name" if self.get("run.name") else "name"
        return self.record("name", name, self.file(dotted))

    def resolve_engine(self) -> Engine:
        engine: Engine = self.model.engine_value
        for dotted in (
            "run.engine",
            "engine",
            "workflow.workload_kind",
            "run.workload_kind",
            "compute.workload_kind",
        ):
            if self.get(dotted):
                return self.record("engine", engine, self.file(dotted))
        return self.record("engine", engine, Source(Layer.DERIVED, "inferred from compute"))

    def resolve_context(self) -> str:
        if self.flags.context:
            return self.record("context", self.flags.context, self.flag("--context"))
        if self.descriptor:
            return self.record(
                "context",
                self.descriptor.context,
                Source(Layer.DESCRIPTOR, self.descriptor.path),
            )
        return ""

    def resolve_workspace_name(self) -> str | None:
        candidates: list[tuple[str, Source]] = []
        if self.flags.workspace:
            candidates.append((self.flags.workspace, self.flag("--workspace")))
        if self.get("policy.workspace"):
            candidates.append((self.get("policy.workspace"), self.file("policy.workspace")))
        if self.descriptor:
            candidates.append(
                (self.descriptor.workspace, Source(Layer.DESCRIPTOR, self.descriptor.path))
            )
        chosen = _agree("workspace", candidates)
        if self.workspace and chosen and self.workspace.name != chosen[0]:
            raise ValidationError(
                f"workspace is ambiguous: the resolved TauWorkspace is {self.workspace.name!r} "
                f"but {chosen[1]} names {chosen[0]!r}",
                hint="make --workspace, policy.workspace and the connection descriptor agree",
                owner=RESEARCHER,
            )
        if chosen:
            return self.record("workspace", chosen[0], chosen[1])
        if self.workspace:
            return self.record("workspace", self.workspace.name, self.ws("(connected)"))
        return None

    def resolve_namespace(self) -> str:
        explicit: list[tuple[str, Source]] = []
        if self.flags.namespace:
            explicit.append((self.flags.namespace, self.flag("-n/--namespace")))
        if self.get("policy.namespace"):
            explicit.append((self.get("policy.namespace"), self.file("policy.namespace")))
        workspace = self.workspace
        target = workspace.namespace if workspace else None
        for value, source in explicit:
            if workspace and target and value != target:
                raise ValidationError(
                    f"namespace {value!r} ({source}) conflicts with TauWorkspace "
                    f"{workspace.name!r} target namespace {target!r}",
                    hint="remove the override or select the matching workspace",
                    owner=RESEARCHER,
                )
        if explicit:
            value, source = explicit[0]
            return self.record("namespace", value, source)
        if target:
            return self.record("namespace", target, self.ws("target namespace"))
        return self.unresolved(
            "namespace",
            PLACEHOLDER_NAMESPACE,
            "set policy.namespace, pass -n, or connect a TauWorkspace",
        )

    def unresolved(self, name: str, placeholder: str, how: str) -> str:
        if not self.client_dry_run:
            raise ValidationError(
                f"{name} is unresolved: no flag, run config, workspace or profile provides it",
                hint=how,
                owner=RESEARCHER,
            )
        self.placeholders.append(name)
        return self.record(name, placeholder, Source(Layer.UNRESOLVED, how))

    def check_snapshot_scope(self) -> None:
        if self.get("policy.workload_profile_snapshot") and self.flags.dry_run != "client":
            raise UsageError(
                "policy.workload_profile_snapshot requires --dry-run=client; snapshots cannot "
                "be used for server dry-run or apply",
                owner=RESEARCHER,
            )

    # --- placement ----------------------------------------------------------------------------

    def resolve_placement(self, engine: str) -> Placement:
        profile = self.profile
        if profile:
            self.check_profile_policy()
            self.record("profile", profile.name, Source(Layer.PROFILE, profile.origin))
        queue = self.resolve_queue()
        wpc, ppc = self.resolve_priorities()
        gpu_class = None
        if self.get("policy.gpu_class"):
            gpu_class = self.record(
                "policy.gpu_class", self.get("policy.gpu_class"), self.file("policy.gpu_class")
            )
        extra_selector = tuple(sorted((self.get("policy.node_selector") or {}).items()))
        if extra_selector:
            self.record(
                "policy.node_selector", dict(extra_selector), self.file("policy.node_selector")
            )
        topology: tuple[tuple[str, str], ...] = ()
        if profile and profile.topology_aware and profile.placement in PLACEMENT_TOPOLOGY:
            key, value = PLACEMENT_TOPOLOGY[profile.placement]
            topology = ((key, value),)
            self.record("placement", profile.placement, self.prof("placement"))
        elif self.get("policy.topology") in PLACEMENT_TOPOLOGY:
            key, value = PLACEMENT_TOPOLOGY[self.get("policy.topology")]
            topology = ((key, value),)
            self.record("placement", self.get("policy.topology"), self.file("policy.topology"))
        team, lane = self.get("policy.team"), self.get("policy.lane")
        for dotted, value in (("policy.team", team), ("policy.lane", lane)):
            if value:
                self.record(dotted, value, self.file(dotted))
        return Placement(
            queue=queue,
            team=team,
            lane=lane,
            shape=self.get("policy.shape"),
            topology=profile.placement if profile else self.get("policy.topology"),
            workload_priority_class=wpc,
            pod_priority_class=ppc,
            gpu_class=gpu_class,
            extra_node_selector=extra_selector,
            clear_node_selector=bool(self.get("policy.clear_node_selector")),
            topology_annotations=topology,
            profile=profile.name if profile else None,
            cluster_generation=profile.cluster_generation if profile else None,
            profile_set_hash=profile.profile_set_hash if profile else None,
        )

    def check_profile_policy(self) -> None:
        assert self.profile is not None
        name = self.profile.name
        if self.get("policy.profile") and self.get("policy.profile") != name:
            raise ValidationError(
                f"policy.profile={self.get('policy.profile')!r} conflicts with the selected "
                f"workload profile {name!r}",
                owner=RESEARCHER,
            )
        for dotted in ("policy.shape", "policy.gpu_class", "policy.node_selector"):
            if self.get(dotted):
                raise ValidationError(
                    f"{dotted} cannot be combined with authoritative workload profile {name!r}",
                    hint="select a profile with the required platform placement",
                    owner=RESEARCHER,
                )
        if self.get("policy.clear_node_selector"):
            raise ValidationError(
                "policy.clear_node_selector cannot be combined with authoritative workload "
                f"profile {name!r}",
                hint="select a profile with the required platform placement",
                owner=RESEARCHER,
            )
        if self.get("policy.priority_tier") or self.get("policy.priority"):
            raise ValidationError(
                "policy.priority_tier cannot be combined with authoritative priority classes "
                f"from workload profile {name!r}; remove policy.priority_tier",
                owner=RESEARCHER,
            )
        checks = {
            "policy.mode": self.profile.mode,
            "policy.topology": self.profile.placement,
            "policy.workload_priority_class": self.profile.workload_priority_class,
            "policy.pod_priority_class": self.profile.pod_priority_class,
        }
        for dotted, value in checks.items():
            mine = self.get(dotted)
            if dotted == "policy.topology":
                same = _placement(mine) == _placement(value)
            else:
                same = mine == value
            if mine and value and not same:
                raise ValidationError(
                    f"{dotted}={mine!r} conflicts with authoritative workload profile {name!r} "
                    f"value {value!r}",
                    owner=RESEARCHER,
                )

    def resolve_gpu_resource(self) -> str:
        """The extended resource GPU workers request: whole GPUs, or the MIG slice named."""
        compute = self.model.compute
        if compute is not None and compute.mig_profile:
            resource: str = keys.NVIDIA_MIG_PREFIX + compute.mig_profile
            return self.record("compute.gpu_resource", resource, self.file("compute.mig_profile"))
        return keys.NVIDIA_GPU

    def resolve_queue(self) -> str:
        candidates: list[tuple[str, Source]] = []
        queue = self.get("policy.queue")
        if queue and queue != "auto":
            candidates.append((queue, self.file("policy.queue")))
        if self.workspace and self.workspace.queue:
            candidates.append((self.workspace.queue, self.ws("LocalQueue")))
        if self.profile and self.profile.queue:
            candidates.append((self.profile.queue, self.prof("defaultLocalQueue")))
        chosen = _agree("LocalQueue", candidates)
        if chosen:
            return self.record("queue", chosen[0], chosen[1])
        return self.unresolved(
            "queue",
            PLACEHOLDER_QUEUE,
            "set policy.queue or connect a TauWorkspace that provides a LocalQueue",
        )

    def resolve_priorities(self) -> tuple[str | None, str | None]:
        profile = self.profile
        if profile and (profile.workload_priority_class or profile.pod_priority_class):
            wpc = self.record(
                "workload_priority_class",
                profile.workload_priority_class,
                self.prof("priorities"),
            )
            ppc = self.record(
                "pod_priority_class", profile.pod_priority_class, self.prof("priorities")
            )
            return wpc, ppc
        disabled = bool(self.get("policy.disable_default_priorities")) or bool(
            profile and profile.disable_default_priorities
        )
        wpc = self.get("policy.workload_priority_class")
        ppc = self.get("policy.pod_priority_class")
        if wpc:
            self.record("workload_priority_class", wpc, self.file("policy.workload_priority_class"))
        if ppc:
            self.record("pod_priority_class", ppc, self.file("policy.pod_priority_class"))
        if (wpc and ppc) or disabled:
            if disabled:
                source = (
                    self.file("policy.disable_default_priorities")
                    if self.get("policy.disable_default_priorities")
                    else self.prof("priorities.disableDefaultPriorities")
                )
                self.record("default priorities", "disabled", source)
            return wpc, ppc
        tier, source = self.resolve_tier()
        default = PRIORITY_CLASS_BY_TIER.get(tier, keys.DEFAULT_PRIORITY_CLASS)
        if not wpc:
            wpc = self.record("workload_priority_class", default, source)
        if not ppc:
            ppc = self.record("pod_priority_class", default, source)
        return wpc, ppc

    def resolve_tier(self) -> tuple[str, Source]:
        for dotted in ("policy.priority_tier", "policy.priority"):
            if self.get(dotted):
                return self.get(dotted), self.file(dotted)
        if self.workspace and self.workspace.priority_tier:
            tier = self.workspace.priority_tier
            return ("default" if tier == "normal" else tier), self.ws("priority tier")
        return "default", self.default("priority tier default")

    # --- sizing -------------------------------------------------------------------------------

    def resolve_counts(self, engine: str) -> tuple[int, int, int, int]:
        compute = self.block("compute")
        profile = self.profile
        if engine == "job":
            nodes = self.block("execution").nodes if self.block("execution") else 1
            gpus = compute.gpus if compute else None
            if profile:
                self.check_profile_count("compute.gpus", gpus, profile.gpus_per_worker)
                if self._explicit("execution", "nodes"):
                    self.check_profile_count("execution.nodes", nodes, profile.worker_count)
                gpus = self.record(
                    "compute.gpus", profile.gpus_per_worker, self.prof("gpusPerWorker")
                )
                nodes = profile.worker_count
                self.record("execution.nodes", nodes, self.prof("workerCount"))
                return gpus, 1, 0, nodes
            if gpus is not None:
                self.record("compute.gpus", gpus, self.file("compute.gpus"))
            else:
                gpus = self.gpus_from_shape()
            if self._explicit("execution", "nodes"):
                self.record("execution.nodes", nodes, self.file("execution.nodes"))
            return gpus, 1, 0, nodes
        workers = compute.workers if compute else 1
        gpw = compute.gpus_per_worker if compute else None
        if profile:
            if self._explicit("compute", "workers"):
                self.check_profile_count("compute.workers", workers, profile.worker_count)
            self.check_profile_count("compute.gpus_per_worker", gpw, profile.gpus_per_worker)
            workers = self.record("compute.workers", profile.worker_count, self.prof("workerCount"))
            gpw = self.record(
                "compute.gpus_per_worker", profile.gpus_per_worker, self.prof("gpusPerWorker")
            )
            return 0, workers, gpw, 1
        self.record(
            "compute.workers",
            workers,
            self.file("compute.workers")
            if self._explicit("compute", "workers")
            else self.default(),
        )
        if gpw is None:
            gpw = self.record("compute.gpus_per_worker", 1, self.default())
        else:
            self.record("compute.gpus_per_worker", gpw, self.file("compute.gpus_per_worker"))
        return 0, workers, gpw, 1

    def _explicit(self, block: str, name: str) -> bool:
        return self.config.is_set(f"{block}.{name}")

    def check_profile_count(self, dotted: str, mine: int | None, theirs: int) -> None:
        assert self.profile is not None
        if mine is not None and mine != theirs:
            raise ValidationError(
                f"{dotted}={mine} conflicts with authoritative workload profile "
                f"{self.profile.name!r} value {theirs}",
                hint=f"remove {dotted} or select a matching profile",
                owner=RESEARCHER,
            )

    def gpus_from_shape(self) -> int:
        shape = self.get("policy.shape")
        if shape:
            match = _SHAPE_COUNT.match(shape)
            if not match:
                raise ValidationError(
                    f"policy.shape {shape!r} does not prove a direct Job GPU count; set "
                    "compute.gpus explicitly",
                    owner=RESEARCHER,
                )
            return self.record("compute.gpus", int(match.group(1)), self.file("policy.shape"))
        raise ValidationError(
            "engine=job has no resolved GPU cardinality; select a ready TauCluster workload "
            "profile or set compute.gpus for local config validation",
            owner=RESEARCHER,
        )

    def resources(self, prefix: str) -> Resources:
        values = {}
        for name in ("cpu_request", "memory_request", "cpu_limit", "memory_limit"):
            dotted = f"compute.{prefix}{name}"
            value = self.get(dotted)
            if value:
                self.record(dotted, value, self.file(dotted))
            values[name] = value
        return Resources(**values)

    def resolve_image(self, engine: str, gpus_per_worker: int) -> str:
        image: str | None = self.model.image_value
        if image:
            for dotted in ("runtime.image", "run.image", "image"):
                if self.get(dotted):
                    return self.record("image", image, self.file(dotted))
        if engine == "rayjob":
            default = DEFAULT_RAY_GPU_IMAGE if gpus_per_worker > 0 else DEFAULT_RAY_CPU_IMAGE
            return self.record("image", default, self.default("Ray runtime image"))
        raise ValidationError(
            "no image: the run config sets no runtime.image and no workload profile provides one",
            hint="set runtime.image (a pinned tag or digest)",
            owner=RESEARCHER,
        )

    def resolve_service_account(self) -> str | None:
        if self.flags.service_account:
            return self.record(
                "service_account", self.flags.service_account, self.flag("--service-account")
            )
        if self.workspace and self.workspace.service_account:
            return self.record(
                "service_account", self.workspace.service_account, self.ws("workload identity")
            )
        if self.client_dry_run:
            self.notes.append(
                "client dry-run leaves the service account as a placeholder; use "
                "--dry-run=server to resolve live submission defaults"
            )
            return self.record(
                "service_account",
                PLACEHOLDER_SERVICE_ACCOUNT,
                Source(Layer.UNRESOLVED, "resolved at submission from the TauWorkspace"),
            )
        return None

    def resolve_ttl(self, engine: str) -> int:
        if engine != "job":
            return keys.DEFAULT_TTL_SECONDS
        value: int | None = self.get("run.ttl_seconds_after_finished")
        if value is not None:
            return self.record(
                "ttl_seconds_after_finished", value, self.file("run.ttl_seconds_after_finished")
            )
        if self.workspace and self.workspace.retention_seconds:
            return self.record(
                "ttl_seconds_after_finished",
                self.workspace.retention_seconds,
                self.ws("retention"),
            )
        return self.record(
            "ttl_seconds_after_finished", keys.DEFAULT_TTL_SECONDS, self.default("8h")
        )

    # --- storage ------------------------------------------------------------------------------

    def resolve_storage(self, engine: str) -> tuple[tuple[PvcVolume, ...], tuple[Mount, ...]]:
        claim = self.model.data_pvc
        if claim:
            dotted = "storage.data_pvc" if self.get("storage.data_pvc") else "storage.result_pvc"
            self.record("data PVC (/data)", claim, self.file(dotted))
            return (PvcVolume("data", claim),), (Mount("data", "/data"),)
        volumes = tuple(_parse_volume(spec) for spec in self.get("storage.volumes") or ())
        mounts = tuple(_parse_mount(spec) for spec in self.get("storage.mounts") or ())
        if len(volumes) == 1 and not mounts:
            mounts = (Mount(volumes[0].name, "/data"),)
        for mount in mounts:
            claim_of = {v.name: v.claim for v in volumes}.get(mount.volume)
            self.record(f"mount {mount.path}", f"pvc/{claim_of}", self.file("storage.mounts"))
        return volumes, mounts

    def resolve_output(self, name: str, data_mounted: bool) -> str | None:
        output: str | None = self.get("storage.output")
        if output:
            workspace = self.workspace
            root = workspace.output_root if workspace else None
            if (
                workspace
                and root
                and not (output == root or output.startswith(root.rstrip("/") + "/"))
            ):
                raise ValidationError(
                    f"storage.output {output!r} is outside TauWorkspace "
                    f"{workspace.name!r} output root {root!r}",
                    owner=RESEARCHER,
                )
            return self.record("storage.output", output, self.file("storage.output"))
        if not data_mounted:
            return None
        if self.workspace and self.workspace.output_root:
            value = f"{self.workspace.output_root.rstrip('/')}/{name}"
            return self.record("storage.output", value, self.ws("output root"))
        value = f"{DEFAULT_OUTPUT_ROOT}/{name}"
        return self.record("storage.output", value, self.default("PVC-backed run"))

    def resolve_assets(self) -> tuple[ImageAsset, ...]:
        assets = self.get("storage.image_assets") or ()
        return tuple(ImageAsset(a.name, a.image, a.source_path, a.mount_path) for a in assets)

    def resolve_source(self) -> SourceImage | None:
        source = self.get("run.source")
        if not source:
            return None
        self.record("run.source.image", source.image, self.file("run.source.image"))
        return SourceImage(source.image, source.path)

    def resolve_script(self) -> Script | None:
        path = self.config.loaded.entrypoint_path()
        if path is None:
            return None
        entry = self.model.entrypoint_value
        try:
            content = path.read_bytes()
        except OSError as error:
            raise ValidationError(
                f"entrypoint {entry!r}: cannot read {path.name}: {error.strerror}",
                hint="entrypoint paths are relative to the run config",
                owner=RESEARCHER,
            ) from None
        for dotted in ("run.entrypoint", "run.script", "entrypoint", "script"):
            if self.get(dotted):
                self.record("entrypoint", entry, self.file(dotted))
                break
        return Script(path.name, content)

    def resolve_project(self) -> Project | None:
        working_dir = self.get("run.working_dir")
        entrypoint = self.model.entrypoint_value
        if not working_dir or not entrypoint:
            return None
        from tau.resolve.project import package

        self.record("run.working_dir", working_dir, self.file("run.working_dir"))
        return package(
            self.config.path.parent,
            working_dir,
            entrypoint,
            self.get("run.working_dir_excludes"),
        )

    # --- environment, experiment, launchers -----------------------------------------------------

    def resolve_env(self) -> tuple[tuple[str, str], ...]:
        env = self.get("runtime.env") or {}
        for name, value in sorted(env.items()):
            self.record(f"env {name}", value, self.file(f"runtime.env.{name}"))
        return tuple(sorted(env.items()))

    def resolve_configs(self) -> tuple[tuple[str, object], ...]:
        configs = self.get("execution.configs") or {}
        for name, value in sorted(configs.items()):
            self.record(f"config {name}", value, self.file(f"execution.configs.{name}"))
        return tuple(sorted(configs.items()))

    def resolve_env_secret(self) -> tuple[tuple[str, SecretRef], ...]:
        refs = []
        for name, value in sorted((self.get("runtime.env_secret") or {}).items()):
            secret, _, key = value.partition(":")
            refs.append((name, SecretRef(secret, key)))
            self.record(f"env {name}", "<secret>", self.file(f"runtime.env_secret.{name}"))
        return tuple(refs)

    def resolve_experiment(self) -> Experiment:
        experiment = self.block("experiment")
        if experiment is None:
            return Experiment()
        return Experiment(
            project=experiment.project,
            experiment_id=self.model.experiment_id,
            group=experiment.group,
        )

    def resolve_tune(self, launcher: str) -> Tune | None:
        if launcher != "ray-tune":
            return None
        execution = self.block("execution")
        return Tune(
            metric=execution.metric or "",
            mode=execution.mode or "min",
            num_samples=execution.num_samples or 1,
            max_concurrent_trials=execution.max_concurrent_trials or 1,
        )

    def resolve_offload(self, output: str | None) -> MetricsOffload | None:
        """The sidecar's settings; its image: the platform's, else the config's, else ours."""
        offload = self.get("metrics.offload")
        if not offload or not offload.enabled:
            return None
        if self.env.get(keys.ENV_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT):
            raise ValidationError(
                f"{keys.ENV_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT} is set, but this build's "
                "offloader writes only to the workspace store (remote write is not supported)",
                hint=f"unset {keys.ENV_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT}",
                owner=PLATFORM,
            )
        image = self._platform_or_file(
            "metrics.offload.image", keys.ENV_METRICS_OFFLOAD_IMAGE, offload.image
        ) or self.record(
            "metrics.offload.image", DEFAULT_RUNTIME_IMAGE, self.default("runtime image")
        )
        session = self.new_id()
        out = (
            self._platform_or_file("metrics.offload.out", keys.ENV_METRICS_OFFLOAD_OUT, offload.out)
            or f"{output}/.tau/metrics/{session}/offload"
        )
        source = self.env.get(keys.ENV_METRICS_OFFLOAD_SOURCE) or DEFAULT_OFFLOAD_SOURCE
        interval = self.env.get(keys.ENV_METRICS_OFFLOAD_INTERVAL) or DEFAULT_OFFLOAD_INTERVAL
        history = tuple(
            entry if entry.startswith("/") else posixpath.join(output or "/data", entry)
            for entry in self.get("metrics.history") or ()
        )
        self.record(
            "metrics.history", list(history), Source(Layer.DERIVED, "relative to storage.output")
        )
        return MetricsOffload(
            image=image,
            session_id=session,
            history=history,
            out=out,
            source=source,
            interval=interval,
        )

    def _platform_or_file(self, dotted: str, env_name: str, value: str | None) -> str | None:
        """Platform env overrides win over the run config for offload settings."""
        if self.env.get(env_name):
            return self.record(dotted, self.env[env_name], Source(Layer.ENV, env_name))
        if value:
            return self.record(dotted, value, self.file(dotted))
        return None


def _agree(what: str, candidates: list[tuple[str, Source]]) -> tuple[str, Source] | None:
    """The single value all layers agree on; two different values is an ambiguity error."""
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
    # The highest layer that set it is the recorded source.
    return candidates[0]


def _parse_volume(spec: str) -> PvcVolume:
    name, _, rest = spec.partition("=")
    kind, _, claim = rest.partition(":")
    if not name or kind != "pvc" or not claim:
        raise ValidationError(
            f"storage.volumes entry {spec!r} must be NAME=pvc:CLAIM (pvc volumes only)",
            owner=RESEARCHER,
        )
    return PvcVolume(name, claim)


def _parse_mount(spec: str) -> Mount:
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[0] or not parts[1].startswith("/"):
        raise ValidationError(
            f"storage.mounts entry {spec!r} must be NAME:/abs/path[:ro]", owner=RESEARCHER
        )
    read_only = len(parts) == 3 and parts[2] == "ro"
    if len(parts) == 3 and not read_only:
        raise ValidationError(
            f"storage.mounts entry {spec!r}: the only mount option is ro", owner=RESEARCHER
        )
    return Mount(parts[0], parts[1], read_only)


def _random_id() -> str:
    import secrets

    return secrets.token_hex(12)

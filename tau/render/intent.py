"""The resolved intent: everything rendering needs, already decided.

Resolution (`tau.resolve`) merges the run config, workspace defaults, the workload profile
and CLI flags into one of these, recording where each value came from. Rendering only turns
it into objects: no defaults chosen here are hidden from the provenance table, and no field
needs the file system or a cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tau import keys

Engine = Literal["job", "rayjob"]
Launcher = Literal["python", "torchrun", "ray-train", "ray-tune"]


@dataclass(frozen=True)
class Script:
    """The entrypoint shipped inside the object (no ConfigMap, no image rebuild)."""

    name: str
    content: bytes


@dataclass(frozen=True)
class Project:
    """`run.working_dir` packed: a deterministic zip whose single top directory is `project/`."""

    archive: bytes
    # The entrypoint's path inside the project directory.
    entrypoint: str
    files: int = 0


@dataclass(frozen=True)
class Resources:
    cpu_request: str | None = None
    memory_request: str | None = None
    cpu_limit: str | None = None
    memory_limit: str | None = None


@dataclass(frozen=True)
class PvcVolume:
    name: str
    claim: str


@dataclass(frozen=True)
class Mount:
    volume: str
    path: str
    read_only: bool = False


@dataclass(frozen=True)
class ImageAsset:
    name: str
    image: str
    source_path: str
    mount_path: str


@dataclass(frozen=True)
class SourceImage:
    image: str
    path: str


@dataclass(frozen=True)
class SecretRef:
    secret: str
    key: str


@dataclass(frozen=True)
class Tune:
    metric: str
    mode: str = "min"
    num_samples: int = 1
    max_concurrent_trials: int = 1


@dataclass(frozen=True)
class MetricsOffload:
    image: str
    session_id: str
    history: tuple[str, ...]
    out: str
    source: str = "stellar-online"
    interval: str = "2s"
    tags: tuple[tuple[str, str], ...] = ()
    # An init container with restartPolicy: Always (Kubernetes >= 1.29); else a container.
    native_sidecar: bool = True


@dataclass(frozen=True)
class Profiler:
    """`profiler.*` resolved: one tool around the entrypoint of the selected rank (or all).

    `warmup`/`duration` are seconds; `duration` is already the nsys default when unset.
    """

    mode: Literal["nsys", "ncu"]
    rank: str = "0"
    warmup: float | None = None
    duration: float | None = None

    @property
    def ext(self) -> str:
        """The report suffix the tool appends to its `-o` base name."""
        return f"{self.mode}-rep"


@dataclass(frozen=True)
class Placement:
    """Queue, priorities and node placement: from the workload profile, workspace or policy."""

    queue: str
    team: str | None = None
    lane: str | None = None
    shape: str | None = None
    topology: str | None = None
    workload_priority_class: str | None = None
    pod_priority_class: str | None = None
    gpu_class: str | None = None
    # The profile's (platform) selector, and the researcher's policy.node_selector.
    node_selector: tuple[tuple[str, str], ...] = ()
    extra_node_selector: tuple[tuple[str, str], ...] = ()
    clear_node_selector: bool = False
    # Kueue podset topology annotations, e.g. required-topology: kubernetes.io/hostname.
    topology_annotations: tuple[tuple[str, str], ...] = ()
    profile: str | None = None
    cluster_generation: int | None = None
    profile_set_hash: str | None = None
    active_deadline_seconds: int | None = None
    image_pull_policy: str | None = None
    # Pod/container securityContext fields a profile asks for (checked in restricted mode).
    run_as_user: int | None = None
    run_as_group: int | None = None
    privileged: bool = False
    allow_privilege_escalation: bool | None = None
    add_capabilities: tuple[str, ...] = ()


@dataclass(frozen=True)
class Experiment:
    project: str | None = None
    experiment_id: str | None = None
    group: str | None = None
    tags: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Provenance:
    """What produced this workload, stamped as annotations."""

    config_hash: str
    code_sha: str | None = None
    tau_command: tuple[str, ...] = ()
    submission_id: str | None = None


@dataclass(frozen=True)
class RunIntent:
    name: str
    namespace: str
    engine: Engine
    launcher: Launcher
    image: str
    placement: Placement
    provenance: Provenance
    # Launcher set explicitly in the config (recorded in workloadspec-execution for Ray).
    launcher_explicit: bool = False
    script: Script | None = None
    # run.source: the entrypoint as a clean relative path inside the staged source tree.
    source: SourceImage | None = None
    source_entrypoint: str | None = None
    project: Project | None = None
    configs: tuple[tuple[str, object], ...] = ()
    nodes: int = 1
    processes_per_node: int = 1
    gpus: int = 0
    workers: int = 1
    gpus_per_worker: int = 0
    # `nvidia.com/gpu`, or a MIG slice such as `nvidia.com/mig-1g.10gb` (RayJob workers only).
    gpu_resource: str = "nvidia.com/gpu"
    resources: Resources = field(default_factory=Resources)
    head_resources: Resources = field(default_factory=Resources)
    worker_resources: Resources = field(default_factory=Resources)
    env: tuple[tuple[str, str], ...] = ()
    env_secret: tuple[tuple[str, SecretRef], ...] = ()
    pip: tuple[str, ...] = ()
    volumes: tuple[PvcVolume, ...] = ()
    mounts: tuple[Mount, ...] = ()
    output: str | None = None
    staged_publish: bool = False
    publication_id: str | None = None
    checkpoint: str | None = None
    image_assets: tuple[ImageAsset, ...] = ()
    working_dir: str | None = None
    restricted: bool = False
    service_account: str | None = None
    workload_identity: bool = False
    ttl_seconds_after_finished: int = keys.DEFAULT_TTL_SECONDS
    workspace: str | None = None
    workspace_id: str | None = None
    result_scope: str | None = None
    experiment: Experiment = field(default_factory=Experiment)
    tune: Tune | None = None
    metrics_offload: MetricsOffload | None = None
    profiler: Profiler | None = None
    allow_nccl_override: bool = False
    # Datasets pinned from `dataset:` env references: (name@version, digest).
    datasets: tuple[tuple[str, str], ...] = ()

    @property
    def data_mounted(self) -> bool:
        return any(mount.path == "/data" for mount in self.mounts)

    @property
    def multi_node(self) -> bool:
        return self.engine == "job" and self.nodes > 1

"""The direct run config (`tau.yaml`, `tau/<target>.yaml`), newest generation.

Models are strict: unknown keys and wrong YAML types are errors. They only normalise
spellings (case, deprecated aliases); every rule that spans fields lives in `rules.py` so all
independent violations of a file are reported together.
"""

# No `from __future__ import annotations`: pydantic would compile each field's annotation
# string at import (~120 of them); written as code, Python evaluates them with the class.
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationInfo, model_validator
from pydantic import field_validator as _field_validator

from tau import keys
from tau.runconfig.fields import DIRECT_ONLY, RESERVED, WORKFLOW_ONLY, spec

ENGINES = ("job", "rayjob")
ENGINE_ALIASES = {"ray": "rayjob"}
WORKLOAD_KINDS = ("job", "rayjob")
WORKLOAD_KIND_ALIASES = {"ray": "rayjob", "ray-train": "rayjob", "ray_train": "rayjob"}
JOB_LAUNCHERS = ("python", "torchrun")
RAY_LAUNCHERS = ("ray-train", "ray-tune")
GPU_CLASSES = (
    "any",
    "a10-4gb",
    "a10-8gb",
    "a10-12gb",
    "a10-24gb",
    "a100-40gb",
    "a100-80gb",
    "h100-80gb",
    "h100-95gb",
    "h200-141gb",
    "gb200-192gb",
    "gb300-288gb",
)
GPU_CLASS_ALIASES = {
    "a100-nvlink-80gb": "a100-80gb",
    "h100-standalone-95gb": "h100-95gb",
    "h200-nvlink-141gb": "h200-141gb",
}
# The docs' placement values first; the profile-placement spellings of newer upstream builds
# are accepted as written (no warning: both are current somewhere). `PLACEMENT_EQUIVALENT`
# says which spellings name the same placement when a config is compared with a profile.
TOPOLOGIES = (
    "independent",
    "single-node-nvlink",
    "multi-node-nccl",
    "elastic-workers",
    "unconstrained",
    "same-host",
    "same-network-domain",
    "same-site",
)
TOPOLOGY_ALIASES: dict[str, str] = {}
PLACEMENT_EQUIVALENT = {
    "unconstrained": "independent",
    "elastic-workers": "independent",
    "same-host": "single-node-nvlink",
    "same-network-domain": "multi-node-nccl",
}
UNCONSTRAINED_PLACEMENTS = ("independent", "elastic-workers", "unconstrained")
LANES = ("eval", "training", "large-memory", "elastic")
POLICY_MODES = ("fixed", "elastic")
PRIORITY_TIERS = ("default", "priority")
GPU_RESOURCE_MODES = ("device-plugin", "nvidia", "dra", "mig")
RETRY_REASONS = ("Preempted", "Evicted", "OOMKilled")
DEFAULT_RETRY_ON = ("Preempted", "Evicted")
DEFAULT_CHECKPOINT_ROOT = "/data/checkpoints/finetunes"
# nsys captures this long when profiler.duration is unset (and then stops the workload).
NSYS_DEFAULT_DURATION = "2m"
PROFILER_NOTES = "engine job; reports go to <storage.output>/profile on its PVC"
# Go duration strings (`30s`, `1m30s`); YAML numbers are rejected, as upstream does.
DURATION_FIELDS = frozenset(
    {"resilience.backoff_initial", "resilience.backoff_max", "profiler.warmup", "profiler.duration"}
)


def _number_as_text(value: Any) -> Any:
    """Kubernetes quantities may be written as YAML numbers (`cpu_request: 2`)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


Quantity = Annotated[str | None, BeforeValidator(_number_as_text)]
QUANTITY_JSON = ["string", "integer", "number", "null"]


def _canonical(value: str | None, aliases: dict[str, str], *, dash: bool = False) -> str | None:
    """Lower-case and trim an enumerated value and map a deprecated alias to its canonical
    spelling (`rules.deprecations` warns about the alias from the raw YAML)."""
    if value is None:
        return None
    text = normalise(value, dash=dash)
    return aliases.get(text, text)


def normalise(value: str, *, dash: bool = False) -> str:
    text = value.strip().lower()
    if dash:
        text = text.replace("_", "-").replace(" ", "-")
    return text


class Block(BaseModel):
    """Strict base: unknown keys are errors, YAML `null` means "not set".

    Validators are built on first use (`defer_build`), not at import: a command that imports
    the contract without validating a config never pays for them, and validating a
    `RunConfig` builds its nested blocks into one validator instead of one per block.
    """

    model_config = ConfigDict(extra="forbid", strict=True, validate_default=False, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _null_means_unset(cls, data: Any) -> Any:
        if data is None:
            return {}
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data


class Security(Block):
    mode: str | None = spec(
        doc="Pod security profile applied to every generated container.",
        values=("restricted",),
        status=DIRECT_ONLY,
        notes="restricted = Kubernetes Restricted Pod Security; non-root uid/gid 65532 default",
    )


class Runtime(Block):
    image: str | None = spec(doc="Container image (highest priority: over run.image and image).")
    working_dir: str | None = spec(
        doc="Main container working directory (clean absolute path inside the image).",
        status=DIRECT_ONLY,
        notes="engine job only; cannot combine with run.source or run.working_dir",
    )
    pip: list[str] | None = spec(
        doc="Python packages installed through the Ray runtime_env.",
        notes="engine rayjob only",
    )
    env: dict[str, str] | None = spec(
        doc="Literal environment variables for the workload containers.",
        notes="64 KiB per value, 128 KiB in total; Tau-managed names are reserved",
    )
    env_secret: dict[str, str] | None = spec(
        doc="Environment variables from Kubernetes Secrets, as NAME: SECRET:KEY.",
    )
    env_kv: dict[str, str] | None = spec(
        doc="Environment variables from Azure Key Vault (secret-name or vault/secret-name).",
        status=WORKFLOW_ONLY,
    )
    security: Security | None = spec(doc="Pod security settings.", status=DIRECT_ONLY)


class Compute(Block):
    workers: int = spec(1, doc="RayJob execution worker count (the Ray head is separate).")
    gpus: int | None = spec(
        doc="GPUs of the Job pod (0 = CPU Job).", notes="engine job only; must be >= 0"
    )
    gpus_per_worker: int | None = spec(
        doc="GPUs per RayJob worker (0..8).", shown_default="1", notes="engine rayjob only"
    )
    cpu_workers: int | None = spec(
        doc="Managed eval CPU worker override (not Job sizing).", status=WORKFLOW_ONLY
    )
    workload_kind: str | None = spec(
        doc="Workload kind (see run.workload_kind).",
        values=WORKLOAD_KINDS,
        aliases=WORKLOAD_KIND_ALIASES,
    )
    gpu_resource_mode: str | None = spec(
        doc="How GPUs are requested from Kubernetes.",
        values=GPU_RESOURCE_MODES,
        shown_default="device-plugin",
        notes="direct Jobs support device-plugin; RayJob supports device-plugin and mig",
    )
    mig_profile: str | None = spec(
        doc="MIG slice (<N>g.<M>gb) per worker; implies mig mode.", notes="engine rayjob only"
    )
    cpu_request: Quantity = spec(doc="CPU request per pod.", json_type=QUANTITY_JSON)
    memory_request: Quantity = spec(doc="Memory request per pod.", json_type=QUANTITY_JSON)
    cpu_limit: Quantity = spec(doc="CPU limit per pod.", json_type=QUANTITY_JSON)
    memory_limit: Quantity = spec(doc="Memory limit per pod.", json_type=QUANTITY_JSON)
    head_cpu_request: Quantity = spec(doc="Ray head CPU request.", json_type=QUANTITY_JSON)
    head_memory_request: Quantity = spec(doc="Ray head memory request.", json_type=QUANTITY_JSON)
    head_cpu_limit: Quantity = spec(doc="Ray head CPU limit.", json_type=QUANTITY_JSON)
    head_memory_limit: Quantity = spec(doc="Ray head memory limit.", json_type=QUANTITY_JSON)
    worker_cpu_request: Quantity = spec(doc="Ray worker CPU request.", json_type=QUANTITY_JSON)
    worker_memory_request: Quantity = spec(
        doc="Ray worker memory request.", json_type=QUANTITY_JSON
    )
    worker_cpu_limit: Quantity = spec(doc="Ray worker CPU limit.", json_type=QUANTITY_JSON)
    worker_memory_limit: Quantity = spec(doc="Ray worker memory limit.", json_type=QUANTITY_JSON)

    @_field_validator("gpu_resource_mode", "workload_kind")
    @classmethod
    def _lower(cls, value: str | None, info: ValidationInfo) -> str | None:
        aliases = WORKLOAD_KIND_ALIASES if info.field_name == "workload_kind" else {}
        return _canonical(value, aliases)


class Execution(Block):
    launcher: str | None = spec(
        doc="How the entrypoint is started.",
        values=JOB_LAUNCHERS + RAY_LAUNCHERS,
        shown_default="python (job), ray-train (rayjob)",
        notes="job: python|torchrun; rayjob: ray-train|ray-tune",
    )
    processes_per_node: int = spec(1, doc="torchrun processes per node (usually GPUs per pod).")
    nodes: int = spec(1, doc="Job pods; > 1 renders an Indexed Job with torchrun rendezvous.")
    metric: str | None = spec(doc="Metric Ray Tune optimises.", notes="ray-tune only; required")
    mode: str | None = spec(
        doc="Optimisation direction.", values=("min", "max"), shown_default="min"
    )
    num_samples: int | None = spec(doc="Samples per search-space point.", shown_default="1")
    max_concurrent_trials: int | None = spec(doc="Concurrent Tune trials.", shown_default="1")
    configs: dict[str, Any] | None = spec(
        doc="Launcher-specific settings: script flags (python/torchrun), Ray Train config "
        "sections (ray-train) or the search space (ray-tune).",
        json_type="object",
    )
    allow_nccl_override: bool = spec(False, doc="Permit NCCL_* names in runtime.env.")

    @_field_validator("launcher", "mode")
    @classmethod
    def _lower(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _canonical(value, {})


class Policy(Block):
    workspace: str | None = spec(doc="TauWorkspace whose defaults apply.")
    namespace: str | None = spec(doc="Workload namespace (must match the workspace's).")
    profile: str | None = spec(
        doc="TauCluster workload profile (optional when exactly one applies)."
    )
    queue: str | None = spec(
        doc="Kueue LocalQueue; `auto` discovers it live.", notes="must match the workspace queue"
    )
    team: str | None = spec(doc="Accounting team (label-safe).")
    lane: str | None = spec(doc="Scheduling lane.", values=LANES)
    gpu_class: str | None = spec(
        doc=f"GPU hardware class (node label {keys.GPU_CLASS}).",
        values=GPU_CLASSES,
        aliases=GPU_CLASS_ALIASES,
    )
    mode: str | None = spec(
        doc="Scheduling mode.",
        values=POLICY_MODES,
        shown_default="fixed (elastic for lane elastic)",
    )
    topology: str | None = spec(doc="Pod placement.", values=TOPOLOGIES, aliases=TOPOLOGY_ALIASES)
    shape: str | None = spec(doc="Hardware shape such as 8xa100-80gb.")
    priority: str | None = spec(doc="Alias of priority_tier.", values=PRIORITY_TIERS)
    priority_tier: str | None = spec(doc="Priority tier.", values=PRIORITY_TIERS)
    workload_priority_class: str | None = spec(doc="Explicit Kueue WorkloadPriorityClass.")
    pod_priority_class: str | None = spec(doc="Explicit Kubernetes PriorityClass.")
    node_selector: dict[str, str] | None = spec(doc="Extra node selector labels.")
    clear_node_selector: bool = spec(
        False,
        doc="Drop profile/topology node selectors.",
        status=DIRECT_ONLY,
        notes="engine job only",
    )
    disable_default_priorities: bool = spec(
        False, doc="Omit the taugrid-* default priority classes."
    )
    workload_profile_snapshot: str | None = spec(
        doc="Config-relative TauWorkloadProfileSnapshot file for offline --dry-run=client.",
        notes="requires policy.namespace, policy.team and policy.lane",
    )

    @_field_validator("lane", "mode", "priority", "priority_tier")
    @classmethod
    def _lower(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _canonical(value, {})

    @_field_validator("gpu_class")
    @classmethod
    def _gpu_class(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _canonical(value, GPU_CLASS_ALIASES, dash=True)

    @_field_validator("topology")
    @classmethod
    def _topology(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _canonical(value, TOPOLOGY_ALIASES)


class ImageAsset(Block):
    name: str | None = spec(doc="Asset name (DNS label, <= 50 chars).", status=DIRECT_ONLY)
    image: str | None = spec(doc="Digest-pinned source image.", status=DIRECT_ONLY)
    source_path: str | None = spec(doc="Directory copied out of the image.", status=DIRECT_ONLY)
    mount_path: str | None = spec(
        doc="Read-only mount path in the main container.", status=DIRECT_ONLY
    )


class Storage(Block):
    data_pvc: str | None = spec(doc="Existing PVC mounted at /data (never created).")
    result_pvc: str | None = spec(doc="Alias of data_pvc; must equal it when both are set.")
    output: str | None = spec(
        doc="Absolute durable output directory under a mounted PVC.",
        shown_default="/data/checkpoints/workflows/<name> (or the workspace output root)",
    )
    publish: str | None = spec(
        doc="Artifact publication mode.", values=("staged",), status=DIRECT_ONLY
    )
    checkpoint: str | None = spec(
        doc="Relative checkpoint path inside the run's checkpoint dir (indexed as an artifact)."
    )
    volumes: list[str] | None = spec(doc="Extra volumes, NAME=pvc:CLAIM.", notes="engine job only")
    mounts: list[str] | None = spec(doc="Volume mounts, NAME:/path[:ro].", notes="engine job only")
    image_assets: list[ImageAsset] | None = spec(
        doc="Read-only directories staged from pinned images (at most 8).", status=DIRECT_ONLY
    )


class Offload(Block):
    enabled: bool = spec(False, doc="Run the metrics offload sidecar.")
    image: str | None = spec(doc="Offload sidecar image (explicit non-latest tag or digest).")
    out: str | None = spec(doc="Offload spool directory under /data or /var/run/tau.")


class Metrics(Block):
    history: list[str] | None = spec(
        doc="JSONL metric files (absolute under /data, or relative to storage.output)."
    )
    offload: Offload | None = spec(doc="Opt-in metrics offload sidecar.")


class Experiment(Block):
    project: str | None = spec(doc="Project that scopes experiments.")
    name: str | None = spec(doc="Experiment identifier (the comparison set).")
    group: str | None = spec(doc="Arm of runs within the experiment.")
    title: str | None = spec(doc="Deprecated: slugged into the experiment ID when name is absent.")


class Resilience(Block):
    max_retries: int = spec(0, doc="Automatic retries (0 disables retry).")
    retry_on: list[str] | None = spec(
        doc="Failure classes that trigger a retry.",
        values=RETRY_REASONS,
        shown_default="Preempted, Evicted",
    )
    checkpoint_path: str | None = spec(
        doc="Checkpoint directory injected as TAU_RESUME_FROM.",
        shown_default=f"{DEFAULT_CHECKPOINT_ROOT}/<name>",
    )
    backoff_initial: str | None = spec(doc="First retry delay (duration).", shown_default="30s")
    backoff_max: str | None = spec(doc="Longest retry delay (duration).", shown_default="5m")

    @_field_validator("retry_on")
    @classmethod
    def _reasons(cls, value: list[str] | None) -> list[str] | None:
        canonical = {reason.lower(): reason for reason in RETRY_REASONS}
        return None if value is None else [canonical.get(v.lower(), v) for v in value]


class Profiler(Block):
    mode: str | None = spec(doc="Profiler tool.", values=("nsys", "ncu"), notes=PROFILER_NOTES)
    rank: int | str | None = spec(
        doc="Rank to profile, or all.",
        shown_default="0",
        json_type=["integer", "string"],
        notes=f"a process's rank is the first of {', '.join(keys.RANK_ENV)} set, else 0",
    )
    warmup: str | None = spec(doc="Delay before capture (duration).", notes="nsys only")
    duration: str | None = spec(
        doc="Capture length (duration); nsys then stops the workload.",
        shown_default=f"{NSYS_DEFAULT_DURATION} (nsys)",
        notes="nsys only",
    )


class Source(Block):
    image: str | None = spec(doc="Digest-pinned image holding the source tree.", status=DIRECT_ONLY)
    path: str | None = spec(
        doc="Absolute directory of the tree inside that image.", status=DIRECT_ONLY
    )


class RunBlock(Block):
    name: str | None = spec(doc="Run name (wins over top-level name).")
    engine: str | None = spec(
        doc="Engine (wins over top-level engine).", values=ENGINES, aliases=ENGINE_ALIASES
    )
    entrypoint: str | None = spec(doc="Entrypoint script (wins over top-level entrypoint).")
    script: str | None = spec(doc="Alias of run.entrypoint.")
    image: str | None = spec(doc="Image (over top-level image, under runtime.image).")
    main_script: str | None = spec(
        doc="Main script for workflow.file rendering.", status=WORKFLOW_ONLY
    )
    workload_kind: str | None = spec(
        doc="Workload kind.", values=WORKLOAD_KINDS, aliases=WORKLOAD_KIND_ALIASES
    )
    smoke_pairs: int | None = spec(doc="Forwarded to workflow rendering.", status=WORKFLOW_ONLY)
    source: Source | None = spec(
        doc="Stage the source tree from a pinned image.", status=DIRECT_ONLY
    )
    ttl_seconds_after_finished: int | None = spec(
        doc="Seconds a finished Job is kept (1..2147483647).",
        status=DIRECT_ONLY,
        shown_default=str(keys.DEFAULT_TTL_SECONDS),
    )
    working_dir: str | None = spec(
        doc="Local project directory shipped to Ray (relative to the config).",
        notes="engine rayjob only",
    )
    working_dir_excludes: list[str] | None = spec(doc="Extra glob excludes for run.working_dir.")

    @_field_validator("engine", "workload_kind")
    @classmethod
    def _lower(cls, value: str | None, info: ValidationInfo) -> str | None:
        aliases = ENGINE_ALIASES if info.field_name == "engine" else WORKLOAD_KIND_ALIASES
        return _canonical(value, aliases)


class Workflow(Block):
    file: str | None = spec(
        doc="Managed workflow manifest (config-relative).", status=WORKFLOW_ONLY
    )
    script: str | None = spec(doc="Workflow script.", status=WORKFLOW_ONLY)
    main_script: str | None = spec(doc="Workflow main script.", status=WORKFLOW_ONLY)
    workload_kind: str | None = spec(
        doc="Workload kind (highest precedence).",
        values=WORKLOAD_KINDS,
        aliases=WORKLOAD_KIND_ALIASES,
        status=WORKFLOW_ONLY,
    )
    extra_scripts: list[str] | None = spec(
        doc="Extra shipped scripts, SRC[:DEST].", status=WORKFLOW_ONLY
    )
    upstream_checkpoint: str | None = spec(doc="Upstream checkpoint.", status=WORKFLOW_ONLY)
    secret_payload: str | None = spec(doc="Config-relative secret payload.", status=WORKFLOW_ONLY)
    smoke_pairs: int | None = spec(doc="Smoke pairs.", status=WORKFLOW_ONLY)

    @_field_validator("workload_kind")
    @classmethod
    def _lower(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _canonical(value, WORKLOAD_KIND_ALIASES)


class RunConfig(Block):
    """A direct run config: the researcher's checked-in workload intent."""

    schema_version: int | str | None = spec(
        doc="Reserved for SDK-managed manifests; without an engine it selects managed parsing.",
        status=RESERVED,
        json_type=["integer", "string"],
    )
    name: str | None = spec(doc="Stable run/workload name (DNS-1123).")
    engine: str | None = spec(
        doc="Workload engine.",
        values=ENGINES,
        aliases=ENGINE_ALIASES,
        notes="inferred when unset: rayjob for workers > 1, gpus_per_worker or runtime.pip",
    )
    entrypoint: str | None = spec(doc="Script to run, relative to the config file.")
    script: str | None = spec(doc="Alias of entrypoint.")
    image: str | None = spec(doc="Lowest-priority image (runtime.image wins).")
    runtime: Runtime | None = spec(doc="Image, environment, packages and pod security.")
    compute: Compute | None = spec(doc="Worker, GPU, CPU and memory intent.")
    execution: Execution | None = spec(doc="Launcher, topology and launcher configs.")
    policy: Policy | None = spec(doc="Explicit operator/accounting overrides.")
    storage: Storage | None = spec(doc="Durable data, output, checkpoints and mounts.")
    metrics: Metrics | None = spec(doc="Published metric files and the offload sidecar.")
    experiment: Experiment | None = spec(doc="Experiment identity for evidence.")
    resilience: Resilience | None = spec(doc="Automatic retry and checkpoint path.")
    profiler: Profiler | None = spec(doc="Bounded rank-scoped profiling.", notes=PROFILER_NOTES)
    run: RunBlock | None = spec(doc="Nested run identity, source staging and Ray project dir.")
    workflow: Workflow | None = spec(doc="Delegation to an SDK-generated workflow manifest.")

    @_field_validator("engine")
    @classmethod
    def _engine(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _canonical(value, ENGINE_ALIASES)

    # Resolved views: the nested/aliased fields collapse to one value each.

    @property
    def run_name(self) -> str | None:
        return (self.run and self.run.name) or self.name

    @property
    def entrypoint_value(self) -> str | None:
        candidates = (
            self.run and self.run.entrypoint,
            self.run and self.run.script,
            self.entrypoint,
            self.script,
        )
        return next((c for c in candidates if c), None)

    @property
    def image_value(self) -> str | None:
        candidates = (self.runtime and self.runtime.image, self.run and self.run.image, self.image)
        return next((c for c in candidates if c), None)

    @property
    def explicit_engine(self) -> str | None:
        return (self.run and self.run.engine) or self.engine

    @property
    def workload_kind(self) -> str | None:
        candidates = (
            self.workflow and self.workflow.workload_kind,
            self.run and self.run.workload_kind,
            self.compute and self.compute.workload_kind,
        )
        return next((c for c in candidates if c), None)

    @property
    def engine_value(self) -> str:
        """The effective engine: explicit engine, else workload kind, else inference."""
        for value in (self.explicit_engine, self.workload_kind):
            if value in ENGINES:
                return value
        compute = self.compute or Compute()
        pip = self.runtime.pip if self.runtime else None
        if compute.workers > 1 or compute.gpus_per_worker is not None or bool(pip):
            return "rayjob"
        return "job"

    @property
    def launcher_value(self) -> str:
        """The explicit launcher, else the engine's: a multi-node Job meets by torchrun."""
        launcher = self.execution.launcher if self.execution else None
        if launcher:
            return launcher
        if self.engine_value == "rayjob":
            return "ray-train"
        return "torchrun" if self.execution and self.execution.nodes > 1 else "python"

    @property
    def is_managed_dispatch(self) -> bool:
        """`workflow.file` hands dispatch to a managed workflow manifest."""
        return bool(self.workflow and self.workflow.file)

    @property
    def data_pvc(self) -> str | None:
        storage = self.storage
        return (storage.data_pvc or storage.result_pvc) if storage else None

    @property
    def experiment_id(self) -> str | None:
        """Experiment ID: name, else the slug of the deprecated title, else the group."""
        exp = self.experiment
        if exp is None:
            return None
        if exp.name:
            return exp.name
        if exp.title:
            return slug(exp.title) or None
        return exp.group

    def ttl_seconds(self) -> int:
        run = self.run
        value = run.ttl_seconds_after_finished if run else None
        return keys.DEFAULT_TTL_SECONDS if value is None else value

    def retry_on(self) -> list[str]:
        resilience = self.resilience or Resilience()
        if resilience.retry_on:
            return list(resilience.retry_on)
        return list(DEFAULT_RETRY_ON) if resilience.max_retries > 0 else []

    def checkpoint_path(self) -> str | None:
        resilience = self.resilience
        if resilience and resilience.checkpoint_path:
            return resilience.checkpoint_path
        name = self.run_name
        return f"{DEFAULT_CHECKPOINT_ROOT}/{name}" if name else None


def slug(text: str) -> str:
    """`ModernBERT FineWeb: Round 1` -> `modernbert-fineweb-round-1`."""
    out: list[str] = []
    for char in text.lower():
        if char.isascii() and char.isalnum():
            out.append(char)
        elif out and out[-1] != "-":
            out.append("-")
    return "".join(out).strip("-")

"""The managed workflow manifest (`schema_version: 1`), typed: what the workflow renderer reads.

`tau.runconfig.managed` recognises the format and warns about unknown keys; this module
gives the known keys types and defaults and checks the rules a manifest must satisfy
before rendering. Every independent problem of a manifest is reported at once.
"""

from __future__ import annotations

import posixpath
import re
from typing import Annotated, Any

import pydantic
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from tau import keys

SCHEMA_VERSION = 1
KINDS = ("job", "rayjob", "rayjob-eval")
KIND_ALIASES = {"ray": "rayjob", "ray-train": "rayjob", "ray_train": "rayjob"}
MAX_GPUS = 8
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RAYJOB_NAME_MAX = 47
NAME_MAX = 63
DEFAULT_PREFIX = "tau"
DEFAULT_CHECKPOINT = "last.safetensors"
# Volumes and paths the workflow renderer owns; storage.mounts cannot take them.
RESERVED_VOLUMES = ("data", "script", "manifest", "dshm", "tau-hot", "kv-secrets")
RESERVED_PATHS = ("/data", "/script", "/manifest", "/dev/shm", "/mnt", "/tmp", "/var/run/tau")


def _text(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


Quantity = Annotated[str | None, BeforeValidator(_text)]


class Part(BaseModel):
    """Unknown keys are warned about by `tau.runconfig.managed`, then ignored here."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)


class Compute(Part):
    gpus: int = 1
    workers: int = 1
    cpus: Quantity = None
    cpu_limit: Quantity = None
    memory: Quantity = None
    memory_limit: Quantity = None
    worker_cpus: Quantity = None
    worker_cpu_limit: Quantity = None
    worker_memory: Quantity = None
    worker_memory_limit: Quantity = None
    gpu_resource_mode: str | None = None


class EnvEntry(Part):
    name: str
    value: str | None = None
    value_from: dict[str, Any] | None = Field(default=None, alias="valueFrom")


class Runtime(Part):
    pip: list[str] | None = None
    image: str | None = None
    env: list[EnvEntry] = Field(default_factory=list)
    env_kv: dict[str, str] = Field(default_factory=dict)


class Mount(Part):
    name: str
    mount_path: str = Field(alias="mountPath")
    pvc: str
    read_only: bool = Field(default=False, alias="readOnly")


class Storage(Part):
    data_pvc: str | None = None
    mounts: list[Mount] = Field(default_factory=list)


class Artifacts(Part):
    checkpoint: str = DEFAULT_CHECKPOINT


class Research(Part):
    experiment: str | None = None


class ModelInfo(Part):
    name: str | None = None
    base: str | None = None
    task: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    primary_metric: str | None = None
    metric_direction: str | None = None


class Naming(Part):
    prefix: str = DEFAULT_PREFIX


class EvalBlock(Part):
    cpu_workers: int = 0
    upstream: str | None = None


class RunPart(Part):
    name: str | None = None
    entrypoint: str | None = None
    script: str | None = None
    main_script: str | None = None
    workload_kind: str | None = None
    smoke_pairs: int | None = None


class WorkflowPart(Part):
    extra_scripts: list[str] = Field(default_factory=list)
    secret_payload: str | None = None
    upstream_checkpoint: str | None = None
    main_script: str | None = None
    script: str | None = None
    workload_kind: str | None = None
    smoke_pairs: int | None = None


class Policy(Part):
    workspace: str | None = None
    namespace: str | None = None
    queue: str | None = None
    team: str | None = None
    lane: str | None = None
    gpu_class: str | None = None
    node_selector: dict[str, str] = Field(default_factory=dict)
    disable_default_priorities: bool = False


class Manifest(Part):
    schema_version: Any = None
    name: str = ""
    compute: Compute = Field(default_factory=Compute)
    runtime: Runtime = Field(default_factory=Runtime)
    storage: Storage = Field(default_factory=Storage)
    artifacts: Artifacts = Field(default_factory=Artifacts)
    research: Research = Field(default_factory=Research)
    model: ModelInfo = Field(default_factory=ModelInfo)
    resource_naming: Naming = Field(default_factory=Naming)
    eval: EvalBlock = Field(default_factory=EvalBlock)
    run: RunPart = Field(default_factory=RunPart)
    workflow: WorkflowPart = Field(default_factory=WorkflowPart)
    policy: Policy = Field(default_factory=Policy)

    @property
    def resource_name(self) -> str:
        return f"{self.resource_naming.prefix}-{self.name}"

    @property
    def is_eval(self) -> bool:
        return self.eval.cpu_workers > 0

    @property
    def cpu_only(self) -> bool:
        return self.compute.gpus == 0

    @property
    def main_script(self) -> str | None:
        run, flow = self.run, self.workflow
        return next(
            (
                v
                for v in (
                    flow.main_script,
                    flow.script,
                    run.main_script,
                    run.entrypoint,
                    run.script,
                )
                if v
            ),
            None,
        )

    @property
    def smoke_pairs(self) -> int:
        value = self.workflow.smoke_pairs
        return value if value is not None else (self.run.smoke_pairs or 0)

    def kind(self) -> str:
        """workflow → run workload_kind, else rayjob-eval for eval manifests, else job."""
        declared = self.workflow.workload_kind or self.run.workload_kind
        if declared:
            text = declared.strip().lower()
            return KIND_ALIASES.get(text, text)
        return "rayjob-eval" if self.is_eval else "job"


def parse(data: dict[str, Any]) -> tuple[Manifest | None, list[tuple[str, str]]]:
    """The typed manifest, or the type errors (dotted path, message) that prevent it."""
    try:
        return Manifest.model_validate(data), []
    except pydantic.ValidationError as error:
        problems = []
        for item in error.errors(include_url=False, include_context=False):
            path = ".".join(str(p) for p in item["loc"])
            problems.append((path, f"{path}: {item['msg'].lower()}"))
        return None, problems


def problems(manifest: Manifest) -> list[tuple[str, str]]:
    """Every rule the manifest breaks: (dotted path, message)."""
    out: list[tuple[str, str]] = []

    def add(path: str, message: str) -> None:
        out.append((path, message))

    if manifest.schema_version != SCHEMA_VERSION:
        add("schema_version", f"schema_version must be 1, got {manifest.schema_version!r}")
    name = manifest.name
    if not name or not NAME.match(name) or len(name) > NAME_MAX:
        add("name", f"name {name!r} must be a DNS label (lowercase letters, digits, '-')")
    prefix = manifest.resource_naming.prefix
    if not NAME.match(prefix):
        add("resource_naming.prefix", f"resource_naming.prefix {prefix!r} must be a DNS label")
    kind = manifest.kind()
    limit = RAYJOB_NAME_MAX if kind != "job" else NAME_MAX
    if name and len(manifest.resource_name) > limit:
        add(
            "name",
            f"resource name {manifest.resource_name!r} is {len(manifest.resource_name)} "
            f"characters; the {'RayJob' if limit == RAYJOB_NAME_MAX else 'Job'} limit is {limit}",
        )
    if kind not in KINDS:
        add("run.workload_kind", f"workload_kind {kind!r} must be one of: {', '.join(KINDS)}")
    compute = manifest.compute
    if not 0 <= compute.gpus <= MAX_GPUS:
        add("compute.gpus", f"compute.gpus must be between 0 and {MAX_GPUS} (got {compute.gpus})")
    if compute.workers < 1:
        add("compute.workers", f"compute.workers must be >= 1 (got {compute.workers})")
    if compute.gpu_resource_mode not in (None, "device-plugin", "nvidia"):
        add(
            "compute.gpu_resource_mode",
            f"compute.gpu_resource_mode {compute.gpu_resource_mode!r} is not supported by this "
            "build; use device-plugin",
        )
    if kind == "job" and compute.workers > 1:
        add(
            "compute.workers",
            f"workload kind job cannot be multi-node (compute.workers={compute.workers}); set "
            "run.workload_kind: rayjob",
        )
    if manifest.is_eval and kind in ("job", "rayjob"):
        add(
            "run.workload_kind",
            f"workload kind {kind} cannot serve eval manifests (eval.cpu_workers="
            f"{manifest.eval.cpu_workers}); use rayjob-eval",
        )
    if kind == "rayjob-eval":
        if compute.gpus < 1:
            add("compute.gpus", "workload kind rayjob-eval requires compute.gpus > 0 for the "
                "eval GPU worker")  # fmt: skip
        if manifest.eval.cpu_workers < 1:
            add("eval.cpu_workers", "workload kind rayjob-eval requires eval.cpu_workers > 0")
        if compute.workers > 1:
            add("compute.workers", "workload kind rayjob-eval has one GPU worker; remove "
                "compute.workers")  # fmt: skip
    if manifest.runtime.pip is None:
        add("runtime.pip", "runtime.pip is required (list the packages the trainer needs)")
    for i, entry in enumerate(manifest.runtime.pip or []):
        if not entry or entry != entry.strip():
            add(f"runtime.pip[{i}]", f"runtime.pip[{i}]: blank entry or surrounding spaces")
    if kind == "rayjob" and manifest.cpu_only and not manifest.runtime.image:
        add("runtime.image", "a CPU RayJob (compute.gpus: 0) requires runtime.image")
    if not manifest.main_script:
        add(
            "run.entrypoint",
            "run.entrypoint is required: tau ships no fallback trainer (the Python SDK "
            "generates one)",
        )
    out.extend(_env_problems(manifest))
    out.extend(_mount_problems(manifest))
    checkpoint = manifest.artifacts.checkpoint
    clean = posixpath.normpath(checkpoint) if checkpoint else ""
    if (
        not checkpoint
        or checkpoint.startswith("/")
        or clean != checkpoint
        or ".." in clean.split("/")
    ):
        add(
            "artifacts.checkpoint",
            f"artifacts.checkpoint {checkpoint!r} must be a clean relative path inside the run's "
            "checkpoint directory",
        )
    return out


def _env_problems(manifest: Manifest) -> list[tuple[str, str]]:
    out = []
    names: set[str] = set()
    for i, entry in enumerate(manifest.runtime.env):
        where = f"runtime.env[{i}]"
        if not C_IDENTIFIER.match(entry.name):
            out.append((where, f"{where}.name {entry.name!r} must be a C identifier"))
        if (entry.value is None) == (entry.value_from is None):
            out.append((where, f"{where} ({entry.name}): set exactly one of value or valueFrom"))
        if entry.name in names:
            out.append((where, f"{where}: {entry.name} is set twice"))
        names.add(entry.name)
        upper = entry.name.upper()
        if (
            upper in (keys.ENV_MASTER_ADDR, keys.ENV_MASTER_PORT)
            or upper.startswith(keys.NCCL_ENV_PREFIX)
            or (
                upper.startswith(keys.TAU_ENV_PREFIX)
                and entry.name not in keys.USER_SETTABLE_TAU_ENV
            )
        ):
            out.append((where, f"{where}: {entry.name} is managed by Tau and cannot be set"))
    vaults = set()
    for env_name, ref in manifest.runtime.env_kv.items():
        where = f"runtime.env_kv.{env_name}"
        if not C_IDENTIFIER.match(env_name):
            out.append((where, f"{where}: name must be a C identifier"))
        vault, sep, secret = ref.strip().partition("/")
        if not ref.strip() or (sep and (not vault or not secret or "/" in secret)):
            out.append((where, f"{where}: expected secret-name or vault/secret-name, got {ref!r}"))
        if sep:
            vaults.add(vault)
        if env_name in names:
            out.append((where, f"{where} conflicts with runtime.env {env_name}"))
    if len(vaults) > 1:
        out.append(
            (
                "runtime.env_kv",
                f"runtime.env_kv entries must resolve to one Key Vault (got "
                f"{', '.join(sorted(vaults))})",
            )
        )
    return out


def _mount_problems(manifest: Manifest) -> list[tuple[str, str]]:
    out = []
    seen: set[str] = set()
    for i, mount in enumerate(manifest.storage.mounts):
        where = f"storage.mounts[{i}]"
        if not NAME.match(mount.name):
            out.append((f"{where}.name", f"{where}.name {mount.name!r} must be a DNS label"))
        if mount.name in RESERVED_VOLUMES:
            out.append((f"{where}.name", f"{where}.name {mount.name!r} is reserved by Tau"))
        if mount.name in seen:
            out.append((f"{where}.name", f"{where}.name {mount.name!r} is used twice"))
        seen.add(mount.name)
        path = mount.mount_path
        if not path.startswith("/") or posixpath.normpath(path) != path:
            out.append(
                (f"{where}.mountPath", f"{where}.mountPath {path!r} must be clean and absolute")
            )
        elif any(
            path == r or path.startswith(r + "/") or r.startswith(path + "/")
            for r in RESERVED_PATHS
        ):
            out.append(
                (f"{where}.mountPath", f"{where}.mountPath {path!r} overlaps a Tau-owned path")
            )
        if not mount.pvc:
            out.append((f"{where}.pvc", f"{where}.pvc is required"))
    return out

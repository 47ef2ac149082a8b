"""Cross-field rules of the direct run config (reference §2), checked offline.

Every rule appends a problem at the field path it is about instead of raising, so one pass
reports every independent violation of a file. Rules that need the cluster (workload
profiles, TauWorkspace defaults) belong to resolution, not here.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from tau.runconfig import catalog
from tau.runconfig.durations import parse_duration
from tau.runconfig.images import is_digest_pinned, offload_image_problem, pin_problem
from tau.runconfig.models import (
    ENGINES,
    GPU_CLASSES,
    GPU_RESOURCE_MODES,
    JOB_LAUNCHERS,
    LANES,
    POLICY_MODES,
    PRIORITY_TIERS,
    RAY_LAUNCHERS,
    RETRY_REASONS,
    TOPOLOGIES,
    WORKLOAD_KINDS,
    Compute,
    Execution,
    Policy,
    RunConfig,
    Storage,
    normalise,
)

Path = tuple[str | int, ...]

SETTABLE_TAU_KEYS = ("TAU_RESUME_FROM", "TAU_RETRY_ATTEMPT", "TAU_RETRY_MAX", "TAU_RETRY_REASON")
ENV_VALUE_LIMIT = 65536
ENV_TOTAL_LIMIT = 131072
TTL_MAX = 2147483647
MAX_IMAGE_ASSETS = 8
RESERVED_MOUNTS = (
    "/data",
    "/mnt",
    "/script",
    "/manifest",
    "/tmp",
    "/dev/shm",
    "/var/run/tau",
    "/tau/source",
)
TORCHRUN_MANAGED_FLAGS = frozenset(
    {
        "standalone",
        "nnodes",
        "nproc-per-node",
        "node-rank",
        "rdzv-backend",
        "rdzv-endpoint",
        "rdzv-id",
        "master-addr",
        "master-port",
        "module",
        "no-python",
        "run-path",
    }
)
RAY_TRAIN_SECTIONS = ("torch_config", "scaling_config", "failure_config")
SOURCE_STAGING = "/tau-source"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CONFIG_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_QUANTITY = re.compile(
    r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$"
)
_MIG = re.compile(r"^\d+g\.\d+gb$")
_SHAPE_COUNT = re.compile(r"^(\d+)x")
_IDENTIFIER = re.compile(r"^[a-z0-9]([a-z0-9_.-]*[a-z0-9])?$")


def dotted(path: Path) -> str:
    """`("storage", "image_assets", 0, "name")` -> `storage.image_assets[0].name`.

    Keys that would make the path ambiguous (empty, dots, brackets, spaces) are quoted.
    """
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        name = part
        if not part or any(c in part for c in '.[]" ') or not part.isprintable():
            name = json.dumps(part, ensure_ascii=False)
        text += f".{name}" if text else name
    return text


def one_of(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join(values)


def shape_gpu_count(shape: str | None) -> int | None:
    """GPUs encoded in a shape like `8xa100-80gb`."""
    match = _SHAPE_COUNT.match(shape or "")
    return int(match.group(1)) if match else None


def job_gpu_count(config: RunConfig) -> int | None:
    """The Job pod's GPU count known from the config alone (compute.gpus, else the shape)."""
    compute = config.compute or Compute()
    if compute.gpus is not None:
        return compute.gpus
    return shape_gpu_count(config.policy.shape if config.policy else None)


def is_clean_absolute(path: str) -> bool:
    return (
        path == path.strip()
        and path.startswith("/")
        and "\\" not in path
        and posixpath.normpath(path) == path
        and not path.startswith("//")
    )


def is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class Checker:
    """Runs every rule over one validated config and its raw YAML data."""

    def __init__(self, config: RunConfig, raw: dict[str, Any]) -> None:
        self.config = config
        self.raw = raw
        self.problems: list[tuple[Path, str]] = []
        self.warnings: list[tuple[Path, str]] = []
        self.engine = config.engine_value
        self.launcher = config.launcher_value
        self.managed = config.is_managed_dispatch

    def add(self, path: Path, message: str) -> None:
        self.problems.append((path, message))

    def present(self, *path: str | int) -> bool:
        node: Any = self.raw
        for part in path:
            if isinstance(node, dict) and part in node and node[part] is not None:
                node = node[part]
            else:
                return False
        return True

    def raw_at(self, *path: str | int) -> Any:
        node: Any = self.raw
        for part in path:
            if not isinstance(node, dict):
                return None
            node = node.get(part)
        return node

    @property
    def intent(self) -> str:
        parts = []
        if self.config.explicit_engine:
            parts.append(f"engine={self.config.explicit_engine}")
        if self.config.workload_kind:
            parts.append(f"workload_kind={self.config.workload_kind}")
        return "/".join(parts) or "implicit dispatch"

    def engine_path(self) -> Path:
        return ("run", "engine") if self.present("run", "engine") else ("engine",)

    def run(self) -> None:
        for rule in (
            self.identity,
            self.compute,
            self.execution,
            self.launcher_configs,
            self.runtime,
            self.environment,
            self.run_block,
            self.managed_only,
            self.policy,
            self.storage,
            self.image_assets,
            self.metrics,
            self.resilience,
            self.profiler,
            self.deprecations,
        ):
            rule()

    # -- identity and engine -------------------------------------------------------------

    def identity(self) -> None:
        config = self.config
        for path in (("engine",), ("run", "engine")):
            value = self.raw_at(*path)
            if isinstance(value, str) and normalise(value) not in (*ENGINES, "ray"):
                self.add(path, f'engine "{value}" is not valid; use job or rayjob')
        for path in (("workflow",), ("run",), ("compute",)):
            value = self.raw_at(*path, "workload_kind")
            kind = getattr(getattr(config, path[0]), "workload_kind", None)
            if isinstance(value, str) and kind not in WORKLOAD_KINDS:
                self.add(
                    (*path, "workload_kind"),
                    "workload_kind must be one of: job, rayjob for non-managed run configs",
                )
        engine, kind = config.explicit_engine, config.workload_kind
        if engine in ENGINES and kind in WORKLOAD_KINDS and engine != kind:
            self.add(self.engine_path(), f"engine={engine} conflicts with workload_kind={kind}")
        name = config.run_name
        if name is not None:
            path = ("run", "name") if self.present("run", "name") else ("name",)
            limit = 47 if self.engine == "rayjob" else 63
            if not _DNS_SUBDOMAIN.match(name) or len(name) > 253:
                self.add(
                    path,
                    f'name "{name}" must be a DNS-1123 subdomain: lowercase letters, digits, '
                    "'-' and '.', starting and ending with a letter or digit",
                )
            elif len(name) > limit:
                self.add(path, f'name "{name}" is longer than {limit} characters ({self.engine})')
            elif self.nodes > 1 and len(name) > 54:
                self.add(
                    path,
                    f'name "{name}" is longer than 54 characters; multi-node Jobs need room '
                    "for the <name>-headless Service",
                )

    @property
    def nodes(self) -> int:
        return (self.config.execution or Execution()).nodes

    # -- compute -------------------------------------------------------------------------

    def compute(self) -> None:
        compute = self.config.compute or Compute()
        job = self.engine == "job"
        if compute.gpus is not None:
            if compute.gpus < 0:
                self.add(("compute", "gpus"), "compute.gpus must be >= 0")
            elif not job:
                self.add(
                    ("compute", "gpus"),
                    "compute.gpus is only supported for engine: job; "
                    "use compute.gpus_per_worker for RayJob",
                )
            shape = self.config.policy.shape if self.config.policy else None
            count = shape_gpu_count(shape)
            if job and count is not None and compute.gpus >= 0 and count != compute.gpus:
                self.add(
                    ("compute", "gpus"),
                    f'compute.gpus={compute.gpus} conflicts with policy shape "{shape}" '
                    f"({count} GPUs)",
                )
        if compute.workers < 1:
            self.add(
                ("compute", "workers"), f"compute.workers must be >= 1 (got {compute.workers})"
            )
        elif job and compute.workers > 1:
            self.add(
                ("compute", "workers"),
                f"{self.intent} cannot set compute.workers={compute.workers}; "
                "use engine: rayjob or remove compute.workers",
            )
        gpw = compute.gpus_per_worker
        if gpw is not None:
            if job:
                self.add(
                    ("compute", "gpus_per_worker"),
                    f"{self.intent} cannot set compute.gpus_per_worker; use compute.gpus for a "
                    "direct Job or switch to engine: rayjob",
                )
            elif not 0 <= gpw <= 8:
                self.add(
                    ("compute", "gpus_per_worker"),
                    f"compute.gpus_per_worker must be between 0 and 8 (got {gpw})",
                )
        for role in ("head", "worker"):
            for resource in ("cpu_request", "memory_request", "cpu_limit", "memory_limit"):
                field = f"{role}_{resource}"
                if job and getattr(compute, field) is not None:
                    self.add(
                        ("compute", field),
                        f"{self.intent} cannot set compute.{field}; jobs are single-pod, so use "
                        "compute.cpu_request, compute.memory_request, compute.cpu_limit or "
                        "compute.memory_limit, or switch to engine: rayjob",
                    )
        for name in Compute.model_fields:
            if name.endswith(("_request", "_limit")):
                value = getattr(compute, name)
                if value is not None and not _QUANTITY.match(value):
                    self.add(
                        ("compute", name),
                        f'compute.{name} "{value}" is not a Kubernetes quantity '
                        "(for example 500m, 2, 4Gi)",
                    )
        mode = compute.gpu_resource_mode
        if mode is not None:
            if mode not in GPU_RESOURCE_MODES:
                self.add(
                    ("compute", "gpu_resource_mode"),
                    f"compute.gpu_resource_mode must be one of: {one_of(GPU_RESOURCE_MODES)}",
                )
            elif job and mode not in ("device-plugin", "nvidia"):
                self.add(
                    ("compute", "gpu_resource_mode"),
                    f'{self.intent} cannot use compute.gpu_resource_mode="{mode}"; '
                    "direct Jobs support device-plugin GPUs",
                )
            elif not job and mode == "dra":
                self.add(
                    ("compute", "gpu_resource_mode"),
                    f'{self.intent} cannot use compute.gpu_resource_mode="{mode}"; '
                    "RayJobs support device-plugin and mig GPUs",
                )
        if compute.mig_profile is not None:
            if job:
                self.add(
                    ("compute", "mig_profile"),
                    f"{self.intent} cannot set compute.mig_profile; switch to engine: rayjob",
                )
            elif not _MIG.match(compute.mig_profile):
                self.add(
                    ("compute", "mig_profile"),
                    f'compute.mig_profile "{compute.mig_profile}" must look like <N>g.<M>gb '
                    "(for example 1g.10gb)",
                )

    # -- execution -----------------------------------------------------------------------

    def execution(self) -> None:
        execution = self.config.execution or Execution()
        launcher = execution.launcher
        path: Path = ("execution", "launcher")
        explicit_job = self.config.explicit_engine == "job" or self.config.workload_kind == "job"
        if launcher is not None:
            if self.engine == "job":
                if launcher in RAY_LAUNCHERS:
                    if explicit_job:
                        self.add(
                            path,
                            f'execution.launcher "{launcher}" requires engine: rayjob (needs a '
                            "Ray cluster); got engine: job",
                        )
                    else:
                        self.add(
                            path,
                            f'execution.launcher "{launcher}" requires engine: rayjob; '
                            "set engine: rayjob explicitly",
                        )
                elif launcher not in JOB_LAUNCHERS:
                    self.add(
                        path,
                        f'execution.launcher "{launcher}" is not valid for engine: job; '
                        "use python or torchrun",
                    )
            elif launcher == "torchrun":
                self.add(
                    path,
                    "execution.launcher torchrun is for engine: job; Ray Train manages "
                    "distributed init via TorchConfig",
                )
            elif launcher == "python":
                self.add(
                    path,
                    "execution.launcher python is for engine: job; use ray-train for "
                    "engine: rayjob",
                )
            elif launcher not in RAY_LAUNCHERS:
                self.add(
                    path,
                    f'execution.launcher "{launcher}" is not valid for engine: rayjob; '
                    "use ray-train or ray-tune",
                )
        nproc = execution.processes_per_node
        if nproc < 0:
            self.add(
                ("execution", "processes_per_node"),
                f"execution.processes_per_node must be >= 0 (got {nproc})",
            )
        elif nproc > 1:
            if self.launcher != "torchrun":
                self.add(
                    ("execution", "processes_per_node"),
                    f"execution.processes_per_node={nproc} requires execution.launcher: torchrun",
                )
            else:
                gpus = job_gpu_count(self.config)
                if gpus is not None and nproc > gpus:
                    self.add(
                        ("execution", "processes_per_node"),
                        f"execution.processes_per_node={nproc} exceeds the pod's GPU count "
                        f"{gpus}; torchrun starts one process per GPU",
                    )
        if execution.nodes < 1:
            self.add(
                ("execution", "nodes"), f"execution.nodes must be >= 1 (got {execution.nodes})"
            )
        elif self.engine == "rayjob" and self.present("execution", "nodes"):
            self.add(
                ("execution", "nodes"),
                "execution.nodes is for engine: job; use compute.workers for RayJob pod count",
            )
        elif execution.nodes > 1 and self.launcher != "torchrun":
            self.add(
                ("execution", "nodes"),
                f"{self.intent} with execution.nodes={execution.nodes} requires "
                "execution.launcher=torchrun",
            )
        tune = [
            name
            for name in ("metric", "mode", "num_samples", "max_concurrent_trials")
            if getattr(execution, name) is not None
        ]
        if self.launcher == "ray-tune" and self.engine == "rayjob":
            if not execution.configs:
                self.add(
                    ("execution", "configs"),
                    "execution.configs is required for launcher: ray-tune (defines the search "
                    "space)",
                )
            if not execution.metric:
                self.add(
                    ("execution", "metric"),
                    "execution.metric is required for launcher: "
                    "ray-tune (the metric the search optimises)",
                )
        elif tune:
            self.add(
                ("execution", tune[0]),
                "execution.metric/mode/num_samples/max_concurrent_trials require "
                "execution.launcher: ray-tune",
            )
        if execution.mode is not None and execution.mode not in ("min", "max"):
            self.add(("execution", "mode"), "execution.mode must be min or max")
        for name in ("num_samples", "max_concurrent_trials"):
            value = getattr(execution, name)
            if value is not None and value < 1:
                self.add(("execution", name), f"execution.{name} must be >= 1 (got {value})")
        entrypoint = self.config.entrypoint_value
        if self.launcher == "torchrun" and entrypoint and not entrypoint.lower().endswith(".py"):
            self.add(
                self.entrypoint_path(),
                f'run.entrypoint "{entrypoint}" must be a .py file with execution.launcher: '
                "torchrun, which runs it under python3",
            )

    def entrypoint_path(self) -> Path:
        for path in (("run", "entrypoint"), ("run", "script"), ("entrypoint",), ("script",)):
            if self.raw_at(*path):
                return path
        return ("entrypoint",)

    def launcher_configs(self) -> None:
        execution = self.config.execution
        configs = execution.configs if execution else None
        if not configs:
            return
        path: Path = ("execution", "configs")
        launcher = self.launcher
        if launcher in ("python", "torchrun"):
            canonical: dict[str, str] = {}
            for key, value in configs.items():
                where = (*path, key)
                if not _CONFIG_KEY.match(key):
                    self.add(
                        where,
                        f"execution.configs: key {key!r} must match ^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                    )
                    continue
                if value is None:
                    self.add(
                        where,
                        f"execution.configs: key {key!r} has null value; use empty string for a "
                        "bare flag",
                    )
                elif isinstance(value, dict | list):
                    self.add(
                        where,
                        f"execution.configs: key {key!r} has non-scalar value; "
                        "use a string, number or boolean",
                    )
                if launcher == "torchrun":
                    form = key.lower().replace("_", "-")
                    if form in TORCHRUN_MANAGED_FLAGS:
                        self.add(
                            where,
                            f"execution.configs: key {key!r} is a Tau-managed torchrun flag "
                            "and cannot be overridden",
                        )
                    elif form in canonical:
                        self.add(
                            where,
                            f"execution.configs: keys {canonical[form]!r} and {key!r} name the "
                            "same flag; keep one",
                        )
                    canonical.setdefault(form, key)
        elif launcher == "ray-train":
            for key, value in configs.items():
                if key not in RAY_TRAIN_SECTIONS:
                    self.add(
                        (*path, key),
                        f"execution.configs: {key!r} is not a ray-train section; use "
                        f"{one_of(RAY_TRAIN_SECTIONS)}",
                    )
                elif not isinstance(value, dict):
                    self.add((*path, key), f"execution.configs: {key} must be a mapping")
                elif key == "scaling_config":
                    for managed in ("num_workers", "resources_per_worker"):
                        if managed in value:
                            self.add(
                                (*path, key, managed),
                                f"execution.configs: scaling_config.{managed} is Tau-managed "
                                "(derived from compute.workers and compute.gpus_per_worker)",
                            )

    # -- runtime and environment ---------------------------------------------------------

    def runtime(self) -> None:
        runtime = self.config.runtime
        if runtime is None:
            return
        for i, entry in enumerate(runtime.pip or []):
            if not entry or entry != entry.strip():
                self.add(
                    ("runtime", "pip", i),
                    f"runtime.pip[{i}] must be non-empty without surrounding whitespace",
                )
        if runtime.pip and self.engine == "job":
            self.add(
                ("runtime", "pip"),
                f"{self.intent} cannot set runtime.pip; use engine: rayjob or bake dependencies "
                "into the image",
            )
        working_dir = runtime.working_dir
        if working_dir is not None:
            path: Path = ("runtime", "working_dir")
            run = self.config.run
            if not is_clean_absolute(working_dir):
                self.add(
                    path,
                    f'runtime.working_dir "{working_dir}" must be a clean absolute container path',
                )
            elif run and run.source:
                self.add(
                    path,
                    "runtime.working_dir cannot be combined with run.source; run.source fixes "
                    "the container working directory at /tau/source",
                )
            elif run and run.working_dir:
                self.add(path, "runtime.working_dir cannot be combined with run.working_dir")
            elif self.engine != "job":
                self.add(path, "runtime.working_dir requires engine: job")
        if runtime.security and runtime.security.mode not in (None, "restricted"):
            self.add(
                ("runtime", "security", "mode"),
                'runtime.security.mode must be "restricted" or omitted',
            )

    def environment(self) -> None:
        runtime = self.config.runtime
        if runtime is None:
            return
        env = runtime.env or {}
        secrets = runtime.env_secret or {}
        total = 0
        for name, value in env.items():
            size = len(value.encode())
            if not name or "=" in name:
                self.add(("runtime", "env", name), f"runtime.env name {name!r} is not valid")
            if size > ENV_VALUE_LIMIT:
                self.add(
                    ("runtime", "env", name),
                    f"literal environment variable {name!r} is {size} bytes; maximum is "
                    f"{ENV_VALUE_LIMIT} bytes: use run.source or storage.image_assets for content",
                )
            total += len(name.encode()) + 1 + size + 1
        if total > ENV_TOTAL_LIMIT:
            self.add(
                ("runtime", "env"),
                f"literal environment payload is {total} bytes; maximum is {ENV_TOTAL_LIMIT} "
                "bytes: use run.source or storage.image_assets for content",
            )
        for name, ref in secrets.items():
            where = ("runtime", "env_secret", name)
            if not _C_IDENTIFIER.match(name):
                self.add(
                    where,
                    f"runtime.env_secret.{name}: name must be a C identifier (letters, digits, _)",
                )
            secret, _, key = ref.partition(":")
            if (
                not secret
                or not key
                or ref != ref.strip()
                or secret != secret.strip()
                or key != key.strip()
            ):
                self.add(where, f'runtime.env_secret.{name}: expected SECRET:KEY, got "{ref}"')
            if name in env:
                self.add(
                    where,
                    f"runtime.env_secret.{name} conflicts with runtime.env.{name}; set each env "
                    "var in only one place",
                )
        allow_nccl = bool(self.config.execution and self.config.execution.allow_nccl_override)
        reserved = sorted(
            {
                name
                for name in (*env, *secrets)
                if name.upper() in ("MASTER_ADDR", "MASTER_PORT")
                or (name.upper().startswith("TAU_") and name not in SETTABLE_TAU_KEYS)
                or (name.upper().startswith("NCCL_") and not allow_nccl)
            }
        )
        if reserved:
            where = ("runtime", "env") if set(reserved) & set(env) else ("runtime", "env_secret")
            nccl = any(n.upper().startswith("NCCL_") for n in reserved)
            self.add(
                where,
                "runtime.env contains Tau-managed keys that cannot be overridden: "
                f"{', '.join(reserved)}; remove them from runtime.env (settable TAU_ keys: "
                f"{', '.join(SETTABLE_TAU_KEYS)})"
                + ("; set execution.allow_nccl_override: true to tune NCCL_*" if nccl else ""),
            )
        kv = runtime.env_kv or {}
        if kv and not self.managed:
            self.add(
                ("runtime", "env_kv"),
                "runtime.env_kv is only supported for workflow.file managed configs; direct "
                "Job/RayJob configs must remove runtime.env_kv or use workflow.file",
            )
        elif kv:
            vaults = set()
            for name, ref in kv.items():
                where = ("runtime", "env_kv", name)
                parts = ref.split("/")
                if len(parts) > 2 or not all(parts):
                    self.add(
                        where,
                        f"runtime.env_kv.{name}: expected secret-name or "
                        f'vault/secret-name, got "{ref}"',
                    )
                elif len(parts) == 2:
                    vaults.add(parts[0])
                if name in env or name in secrets:
                    self.add(
                        where,
                        f"runtime.env_kv.{name} conflicts with runtime.env/env_secret.{name}; set "
                        "each env var in only one place",
                    )
            if len(vaults) > 1:
                self.add(
                    ("runtime", "env_kv"),
                    f"runtime.env_kv entries must resolve to one Key Vault (got "
                    f"{', '.join(sorted(vaults))})",
                )

    # -- run.* ---------------------------------------------------------------------------

    def run_block(self) -> None:
        run = self.config.run
        if run is None:
            return
        if run.source is not None:
            path: Path = ("run", "source")
            entrypoint = self.config.entrypoint_value
            if self.engine != "job":
                self.add(path, "run.source requires engine: job")
            if self.managed:
                self.add(path, "run.source requires direct dispatch; remove workflow.file")
            if run.working_dir:
                self.add(path, "run.source cannot be combined with run.working_dir")
            if not run.source.image:
                self.add((*path, "image"), "run.source.image is required")
            elif not is_digest_pinned(run.source.image):
                self.add((*path, "image"), pin_problem("run.source.image"))
            source_path = run.source.path
            if not source_path:
                self.add((*path, "path"), "run.source.path is required")
            elif not is_clean_absolute(source_path) or source_path == "/":
                self.add(
                    (*path, "path"),
                    f'run.source.path "{source_path}" must be a clean absolute path below /',
                )
            elif is_under(source_path, SOURCE_STAGING):
                self.add(
                    (*path, "path"),
                    f'run.source.path "{source_path}" is hidden by Tau\'s staging volume '
                    f"{SOURCE_STAGING}",
                )
            if not entrypoint:
                self.add(path, "run.source requires entrypoint")
            elif (
                entrypoint.startswith("/")
                or "\\" in entrypoint
                or entrypoint in (".", "..")
                or entrypoint.startswith("../")
                or posixpath.normpath(entrypoint) != entrypoint
            ):
                self.add(
                    self.entrypoint_path(),
                    f'entrypoint "{entrypoint}" must be a clean relative path inside run.source',
                )
        ttl = run.ttl_seconds_after_finished
        if ttl is not None:
            path = ("run", "ttl_seconds_after_finished")
            if ttl <= 0:
                self.add(path, "run.ttl_seconds_after_finished must be > 0")
            elif ttl > TTL_MAX:
                self.add(
                    path,
                    f"run.ttl_seconds_after_finished must be <= {TTL_MAX} (Kubernetes int32 "
                    "maximum)",
                )
            if self.engine != "job":
                self.add(path, "run.ttl_seconds_after_finished requires engine: job")
        if run.working_dir is not None:
            path = ("run", "working_dir")
            if self.engine == "job":
                self.add(
                    path,
                    "run.working_dir is not supported with engine: job; use runtime.working_dir "
                    "for a directory inside the image, or engine: rayjob to ship a local project",
                )
            entrypoint = self.config.entrypoint_value
            if entrypoint and not entrypoint.startswith("/"):
                root = posixpath.normpath(run.working_dir)
                target = posixpath.normpath(entrypoint)
                if root != "." and not is_under(target, root):
                    self.add(
                        path,
                        f'entrypoint "{entrypoint}" must be inside run.working_dir "{root}"',
                    )

    def managed_only(self) -> None:
        if not self.managed:
            return
        config = self.config
        rejected = {
            ("storage", "publish"): "storage.publish is not supported for managed workflow configs",
            ("policy", "clear_node_selector"): "policy.clear_node_selector requires native job "
            "dispatch; remove it or drop workflow.file",
            ("runtime", "working_dir"): "runtime.working_dir is not supported for managed "
            "workflow configs",
            ("storage", "image_assets"): "storage.image_assets is not supported for managed "
            "workflow configs",
            ("run", "ttl_seconds_after_finished"): "run.ttl_seconds_after_finished is not "
            "supported for managed workflow configs",
        }
        for path, message in rejected.items():
            value = getattr(getattr(config, path[0]) or object(), path[1], None)
            if value:
                self.add(path, message)

    # -- policy --------------------------------------------------------------------------

    def policy(self) -> None:
        policy = self.config.policy
        if policy is None:
            return
        enums = {
            "lane": LANES,
            "mode": POLICY_MODES,
            "priority": PRIORITY_TIERS,
            "priority_tier": PRIORITY_TIERS,
            "gpu_class": GPU_CLASSES,
            "topology": TOPOLOGIES,
        }
        for name, values in enums.items():
            value = getattr(policy, name)
            if value is not None and value not in values:
                self.add(
                    ("policy", name),
                    f'policy.{name} must be one of: {one_of(values)} (got "{value}")',
                )
        if policy.priority and policy.priority_tier and policy.priority != policy.priority_tier:
            self.add(
                ("policy", "priority"),
                "policy.priority is an alias of policy.priority_tier and conflicts with it; "
                "set only priority_tier",
            )
        tier = policy.priority_tier or policy.priority
        if tier and (
            policy.workload_priority_class
            or policy.pod_priority_class
            or policy.disable_default_priorities
        ):
            self.add(
                ("policy", "priority_tier" if policy.priority_tier else "priority"),
                "policy.priority_tier cannot be combined with policy.workload_priority_class, "
                "policy.pod_priority_class or policy.disable_default_priorities",
            )
        if policy.team is not None and (
            len(policy.team) > 63 or not _LABEL_VALUE.match(policy.team)
        ):
            self.add(
                ("policy", "team"),
                f'policy.team "{policy.team}" must be a valid Kubernetes label value '
                "(<= 63 chars: letters, digits, '-', '_', '.')",
            )
        if policy.clear_node_selector:
            if self.managed:
                pass  # reported by managed_only
            elif self.engine != "job":
                self.add(
                    ("policy", "clear_node_selector"),
                    "policy.clear_node_selector requires engine: job; RayJobs cannot clear "
                    "profile/topology node selectors",
                )
        if policy.workload_profile_snapshot:
            for name in ("namespace", "team", "lane"):
                if not getattr(policy, name):
                    self.add(
                        ("policy", name),
                        f"policy.{name} is required with policy.workload_profile_snapshot so "
                        "offline profile selection has explicit namespace/team/lane "
                        "authorization scope",
                    )
        self.placement(policy)

    def placement(self, policy: Policy) -> None:
        selector = (policy.node_selector or {}).get("tau.azure.com/gpu-class")
        gpu_class = policy.gpu_class
        if gpu_class in GPU_CLASSES and selector is not None:
            if gpu_class == "any":
                self.add(
                    ("policy", "node_selector", "tau.azure.com/gpu-class"),
                    f'gpu_class "any" is unconstrained and cannot be combined with node selector '
                    f'tau.azure.com/gpu-class="{selector}"',
                )
            elif selector != gpu_class:
                self.add(
                    ("policy", "node_selector", "tau.azure.com/gpu-class"),
                    f'gpu_class "{gpu_class}" requires tau.azure.com/gpu-class="{gpu_class}", '
                    f'but the workload node selector uses "{selector}"',
                )
        lane, mode = policy.lane, policy.mode
        if mode == "elastic" and lane is not None and lane != "elastic":
            self.add(("policy", "mode"), "policy.mode elastic requires policy.lane elastic")
        if lane == "elastic" and mode == "fixed":
            self.add(("policy", "lane"), "policy.lane elastic requires policy.mode elastic")
        elastic = mode == "elastic" or lane == "elastic"
        if elastic and policy.topology not in (None, "unconstrained"):
            self.add(
                ("policy", "topology"),
                f'policy.topology "{policy.topology}" cannot be used with elastic mode; elastic '
                "runs need unconstrained placement",
            )
        if gpu_class == "h200-141gb" and (
            (lane is not None and lane != "large-memory") or mode == "elastic"
        ):
            self.add(
                ("policy", "gpu_class"),
                "policy.gpu_class h200-141gb is only available to lane large-memory",
            )
        if (policy.priority_tier or policy.priority) == "priority" and lane == "elastic":
            self.add(
                ("policy", "priority_tier" if policy.priority_tier else "priority"),
                "policy.priority_tier priority is not allowed for lane elastic",
            )

    # -- storage -------------------------------------------------------------------------

    def mount_paths(self) -> dict[str, bool]:
        """PVC-backed mount paths -> writable, as the renderer will mount them."""
        storage = self.config.storage or Storage()
        mounts: dict[str, bool] = {}
        if self.config.data_pvc:
            mounts["/data"] = True
        volumes = self.parsed_volumes()
        parsed_mounts = self.parsed_mounts()
        if len(volumes) == 1 and not parsed_mounts and storage.volumes:
            mounts["/data"] = True
        for _, target, read_only in parsed_mounts:
            mounts[target] = not read_only
        return mounts

    def parsed_volumes(self) -> dict[str, str]:
        volumes: dict[str, str] = {}
        for spec in (self.config.storage or Storage()).volumes or []:
            name, sep, rest = spec.partition("=")
            kind, _, claim = rest.partition(":")
            if sep and name and kind == "pvc" and claim:
                volumes.setdefault(name, claim)
        return volumes

    def parsed_mounts(self) -> list[tuple[str, str, bool]]:
        mounts = []
        for spec in (self.config.storage or Storage()).mounts or []:
            parts = spec.split(":")
            if len(parts) in (2, 3) and parts[0] and parts[1].startswith("/"):
                mode = parts[2] if len(parts) == 3 else "rw"
                if mode in ("ro", "rw"):
                    mounts.append((parts[0], parts[1], mode == "ro"))
        return mounts

    def storage(self) -> None:
        storage = self.config.storage
        if storage is None:
            storage = Storage()
        job = self.engine == "job"
        if storage.data_pvc and storage.result_pvc and storage.data_pvc != storage.result_pvc:
            self.add(
                ("storage", "result_pvc"),
                "storage.result_pvc cannot differ from storage.data_pvc",
            )
        if (storage.volumes or storage.mounts) and not job:
            self.add(
                ("storage", "volumes" if storage.volumes else "mounts"),
                "RayJob run configs support storage.data_pvc/output, but not "
                "storage.volumes/mounts",
            )
        elif job:
            self.volume_specs(storage)
        mounts = self.mount_paths()
        self.output(storage, mounts)
        if storage.publish is not None:
            path: Path = ("storage", "publish")
            if storage.publish != "staged":
                self.add(path, "storage.publish must be one of: staged")
            elif not self.managed:
                if not mounts.get("/data"):
                    self.add(
                        path,
                        "storage.publish staged requires writable PVC output under /data "
                        "(set storage.data_pvc)",
                    )
                if not job or self.nodes > 1:
                    self.add(path, "storage.publish staged requires a single Job pod")
        checkpoint = storage.checkpoint
        if checkpoint is not None:
            path = ("storage", "checkpoint")
            if checkpoint != checkpoint.strip():
                self.add(
                    path,
                    "storage.checkpoint: must not have surrounding whitespace "
                    f"(got {checkpoint!r})",
                )
            elif (
                checkpoint.startswith("/")
                or "\\" in checkpoint
                or any(seg in ("", ".", "..") for seg in checkpoint.split("/"))
            ):
                self.add(
                    path,
                    "storage.checkpoint: must be a relative path inside the run's checkpoint "
                    f"dir, without '.' or '..' segments (got {checkpoint!r})",
                )
            elif not any(mounts.values()):
                self.add(
                    path,
                    "storage.checkpoint requires a writable durable PVC (set storage.data_pvc)",
                )

    def volume_specs(self, storage: Storage) -> None:
        if storage.data_pvc and storage.volumes:
            self.add(
                ("storage", "volumes"),
                "storage.data_pvc cannot be combined with storage.volumes for job run configs",
            )
        names: set[str] = set()
        for i, spec in enumerate(storage.volumes or []):
            name, sep, rest = spec.partition("=")
            kind, _, claim = rest.partition(":")
            where = ("storage", "volumes", i)
            if not sep or not _DNS_LABEL.match(name) or not kind or not claim:
                self.add(where, f'storage.volumes[{i}] "{spec}" must be NAME=pvc:CLAIM')
            elif kind != "pvc":
                self.add(
                    where,
                    f'storage.volumes[{i}] "{spec}": only pvc volumes are supported '
                    "(NAME=pvc:CLAIM)",
                )
            elif name in names:
                self.add(where, f'storage.volumes[{i}]: duplicate volume name "{name}"')
            names.add(name)
        if storage.mounts and not storage.volumes:
            self.add(
                ("storage", "mounts"), "storage.mounts requires at least one storage.volumes entry"
            )
            return
        targets: set[str] = set()
        for i, spec in enumerate(storage.mounts or []):
            parts = spec.split(":")
            where = ("storage", "mounts", i)
            if (
                len(parts) not in (2, 3)
                or not parts[0]
                or not is_clean_absolute(parts[1])
                or (len(parts) == 3 and parts[2] not in ("ro", "rw"))
            ):
                self.add(where, f'storage.mounts[{i}] "{spec}" must be NAME:/absolute/path[:ro|rw]')
                continue
            if parts[0] not in names:
                self.add(where, f'storage.mounts[{i}] references unknown volume "{parts[0]}"')
            if parts[1] in targets:
                self.add(where, f'storage.mounts[{i}]: duplicate mount path "{parts[1]}"')
            targets.add(parts[1])

    def output(self, storage: Storage, mounts: dict[str, bool]) -> None:
        output = storage.output
        if output is None:
            return
        path: Path = ("storage", "output")
        if not output.startswith("/"):
            self.add(path, f'storage.output "{output}": must be an absolute path')
        elif not mounts:
            self.add(
                path,
                f'storage.output "{output}": no PVC supplied by storage.data_pvc or '
                "storage.volumes/mounts; output cannot be retrieved by `tau run get`",
            )
        elif not any(is_under(posixpath.normpath(output), m) for m in mounts):
            self.add(
                path,
                f'storage.output "{output}" is not under any mounted PVC path '
                f"[{', '.join(sorted(mounts))}]",
            )

    def image_assets(self) -> None:
        storage = self.config.storage
        assets = storage.image_assets if storage else None
        if not assets:
            return
        base: Path = ("storage", "image_assets")
        if self.engine != "job":
            self.add(base, "storage.image_assets is only supported for engine: job")
        if len(assets) > MAX_IMAGE_ASSETS:
            self.add(base, f"storage.image_assets supports at most {MAX_IMAGE_ASSETS} entries")
        names: set[str] = set()
        targets: list[str] = []
        for i, asset in enumerate(assets):
            where = (*base, i)
            prefix = f"storage.image_assets[{i}]"
            if not asset.name:
                self.add((*where, "name"), f"{prefix}.name is required")
            elif len(asset.name) > 50 or not _DNS_LABEL.match(asset.name):
                self.add(
                    (*where, "name"),
                    f'{prefix}.name "{asset.name}" must be a DNS label of at most 50 characters',
                )
            elif asset.name in names:
                self.add((*where, "name"), f'{prefix}.name "{asset.name}" is not unique')
            names.add(asset.name or "")
            if not asset.image:
                self.add((*where, "image"), f"{prefix}.image is required")
            elif not is_digest_pinned(asset.image):
                self.add((*where, "image"), pin_problem(f"{prefix}.image"))
            source = asset.source_path
            if not source:
                self.add((*where, "source_path"), f"{prefix}.source_path is required")
            elif not is_clean_absolute(source) or source == "/":
                self.add(
                    (*where, "source_path"),
                    f'{prefix}.source_path "{source}" must be a clean absolute path below /',
                )
            elif is_under(source, "/tau-asset"):
                self.add(
                    (*where, "source_path"),
                    f'{prefix}.source_path "{source}" is hidden by Tau\'s staging mount /tau-asset',
                )
            target = asset.mount_path
            if not target:
                self.add((*where, "mount_path"), f"{prefix}.mount_path is required")
            elif not is_clean_absolute(target) or target == "/":
                self.add(
                    (*where, "mount_path"),
                    f'{prefix}.mount_path "{target}" must be a clean absolute path',
                )
            else:
                clash = next(
                    (r for r in (*RESERVED_MOUNTS, *targets) if _overlaps(target, r)), None
                )
                if clash is not None:
                    what = "Tau-reserved path" if clash in RESERVED_MOUNTS else "mount path"
                    self.add(
                        (*where, "mount_path"),
                        f'{prefix}.mount_path "{target}" overlaps {what} "{clash}"',
                    )
                targets.append(target)

    # -- metrics, experiment, resilience, profiler ---------------------------------------

    def metrics(self) -> None:
        metrics = self.config.metrics
        if metrics is None:
            return
        for i, entry in enumerate(metrics.history or []):
            where = ("metrics", "history", i)
            if not entry.strip():
                self.add(where, f"metrics.history[{i}] must not be empty")
            elif entry.startswith("/"):
                if not is_under(posixpath.normpath(entry), "/data"):
                    self.add(where, f"metrics.history[{i}] absolute paths must be under /data")
            elif posixpath.normpath(entry).startswith(".."):
                self.add(
                    where, f"metrics.history[{i}] relative paths must not escape storage.output"
                )
        offload = metrics.offload
        if offload is None:
            return
        if offload.image is not None:
            problem = offload_image_problem(offload.image)
            if problem:
                self.add(("metrics", "offload", "image"), problem)
        if offload.out is not None and not (
            is_clean_absolute(offload.out)
            and (is_under(offload.out, "/data") or is_under(offload.out, "/var/run/tau"))
        ):
            self.add(
                ("metrics", "offload", "out"),
                f'metrics.offload.out "{offload.out}" must be a clean path under /data or '
                "/var/run/tau",
            )
        if offload.enabled:
            self.offload_requirements()

    def offload_requirements(self) -> None:
        config = self.config
        path: Path = ("metrics", "offload", "enabled")
        if not (config.metrics and config.metrics.history):
            self.add(
                ("metrics", "history"),
                "metrics.history is required when metrics.offload.enabled is true",
            )
        experiment = config.experiment
        project = experiment.project if experiment else None
        if not project:
            self.add(
                ("experiment", "project"),
                "experiment.project is required when metrics.offload.enabled is true",
            )
        if not config.experiment_id:
            self.add(
                ("experiment", "name"),
                "experiment.name is required when metrics.offload.enabled is true",
            )
        if experiment is not None:
            for name, kind in (("project", "project"), ("name", "experiment"), ("group", "group")):
                value = getattr(experiment, name)
                if value and not _IDENTIFIER.match(value):
                    self.add(
                        ("experiment", name),
                        f'experiment.{name}: {kind} "{value}" is invalid; use lowercase letters, '
                        "digits and internal '-', '_' or '.'",
                    )
        if self.engine == "job" and self.nodes > 1:
            self.add(
                path,
                "metrics.offload.enabled requires a single Job pod; execution.nodes must be "
                "unset or 1",
            )
        if not config.entrypoint_value:
            self.add(
                path,
                "metrics.offload.enabled requires run.entrypoint so Tau can record the workload "
                "exit status",
            )
        if not self.mount_paths().get("/data"):
            self.add(
                path,
                "metrics.offload.enabled requires writable PVC output under /data "
                "(set storage.data_pvc)",
            )

    def resilience(self) -> None:
        resilience = self.config.resilience
        if resilience is None:
            return
        if resilience.max_retries < 0:
            self.add(
                ("resilience", "max_retries"),
                f"resilience.max_retries must be >= 0 (got {resilience.max_retries})",
            )
        for i, reason in enumerate(resilience.retry_on or []):
            if reason not in RETRY_REASONS:
                self.add(
                    ("resilience", "retry_on", i),
                    f'resilience.retry_on[{i}] "{reason}" must be one of: {one_of(RETRY_REASONS)}',
                )
        if resilience.checkpoint_path is not None and not resilience.checkpoint_path.startswith(
            "/"
        ):
            self.add(
                ("resilience", "checkpoint_path"),
                "resilience.checkpoint_path must be an absolute path",
            )
        for name in ("backoff_initial", "backoff_max"):
            self.duration(("resilience", name), getattr(resilience, name))

    def duration(self, path: Path, value: str | None) -> float | None:
        if value is None:
            return None
        try:
            seconds = parse_duration(value)
        except ValueError:
            seconds = -1.0
        if seconds < 0:
            self.add(
                path, f'{dotted(path)} "{value}" is not a duration (for example 30s, 5m, 1h30m)'
            )
            return None
        return seconds

    def profiler(self) -> None:
        profiler = self.config.profiler
        if profiler is None:
            return
        mode = profiler.mode
        if mode not in ("nsys", "ncu"):
            self.add(
                ("profiler", "mode"),
                f'profiler "{mode or ""}": must be nsys|ncu',
            )
        rank = profiler.rank
        if rank is not None and not ((isinstance(rank, int) and rank >= 0) or rank == "all"):
            self.add(("profiler", "rank"), "profiler.rank must be a non-negative integer or all")
        for name in ("warmup", "duration"):
            value = getattr(profiler, name)
            self.duration(("profiler", name), value)
            if value is not None and mode == "ncu":
                self.add(
                    ("profiler", name),
                    f"profiler.{name} currently applies only to profiler.mode=nsys",
                )
        if self.engine == "job":
            if not any(self.mount_paths().values()):
                self.add(
                    ("profiler",),
                    "profiler requires durable PVC output; set storage.data_pvc",
                )
            if self.launcher == "torchrun":
                self.add(
                    ("profiler",), "profiler cannot be combined with execution.launcher torchrun"
                )

    # -- warnings ------------------------------------------------------------------------

    def deprecations(self) -> None:
        for entry in catalog.entries():
            if not entry.aliases:
                continue
            path = tuple(entry.path.split("."))
            value = self.raw_at(*path)
            if not isinstance(value, str):
                continue
            text = normalise(value, dash=entry.path == "policy.gpu_class")
            if text in entry.aliases:
                self.warnings.append(
                    (path, f'{entry.path} "{value}" is deprecated; use "{entry.aliases[text]}"')
                )
        if self.present("experiment", "title"):
            self.warnings.append(
                (
                    ("experiment", "title"),
                    "experiment.title is deprecated; set experiment.name to a stable ID",
                )
            )


def _overlaps(a: str, b: str) -> bool:
    return is_under(a, b) or is_under(b, a)


def check(
    config: RunConfig, raw: dict[str, Any]
) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """(problems, warnings) of a config that passed type validation."""
    checker = Checker(config, raw)
    checker.run()
    return checker.problems, checker.warnings

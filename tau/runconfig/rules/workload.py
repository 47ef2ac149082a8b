"""Engine, compute and execution rules (reference §2.2, §2.6, §2.7, §2.15)."""

from __future__ import annotations

from tau.runconfig.models import (
    ENGINES,
    GPU_RESOURCE_MODES,
    JOB_LAUNCHERS,
    RAY_LAUNCHERS,
    WORKLOAD_KINDS,
    Compute,
    Execution,
    normalise,
)
from tau.runconfig.rules.base import (
    CONFIG_KEY,
    DNS_SUBDOMAIN,
    MIG,
    QUANTITY,
    RAY_TRAIN_SECTIONS,
    TORCHRUN_MANAGED_FLAGS,
    Base,
    Path,
    job_gpu_count,
    one_of,
    shape_gpu_count,
)

PATH_MAX = 4096  # Linux: the longest path open(2) accepts


class WorkloadRules(Base):
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
            problem = name_problem(name, self.engine, self.nodes)
            if problem:
                self.add(path, problem)

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
                if value is not None and not QUANTITY.match(value):
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
        if compute.gpu_resource_mode == "mig" and not job and compute.mig_profile is None:
            self.add(
                ("compute", "gpu_resource_mode"),
                "compute.gpu_resource_mode=mig needs compute.mig_profile, the slice each worker "
                "gets (for example 1g.10gb)",
            )
        if compute.mig_profile is not None:
            if job:
                self.add(
                    ("compute", "mig_profile"),
                    f"{self.intent} cannot set compute.mig_profile; switch to engine: rayjob",
                )
            elif not MIG.match(compute.mig_profile):
                self.add(
                    ("compute", "mig_profile"),
                    f'compute.mig_profile "{compute.mig_profile}" must look like <N>g.<M>gb '
                    "(for example 1g.10gb)",
                )

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
        if entrypoint and len(entrypoint.encode()) > PATH_MAX:
            # Resolving a path walks every component: a megabyte of `a/a/...` takes minutes.
            self.add(
                self.entrypoint_path(),
                f"entrypoint is {len(entrypoint.encode())} bytes long; a path has at most "
                f"{PATH_MAX} bytes",
            )
        elif self.launcher == "torchrun" and entrypoint and not entrypoint.lower().endswith(".py"):
            self.add(
                self.entrypoint_path(),
                f'run.entrypoint "{entrypoint}" must be a .py file with execution.launcher: '
                "torchrun, which runs it under python3",
            )

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
                if not CONFIG_KEY.match(key):
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


def name_problem(name: str, engine: str, nodes: int) -> str | None:
    """Why `name` cannot name a run of this engine, or None; also checks a NAME override."""
    limit = 47 if engine == "rayjob" else 63
    if not DNS_SUBDOMAIN.match(name) or len(name) > 253:
        return (
            f'name "{name}" must be a DNS-1123 subdomain: lowercase letters, digits, '
            "'-' and '.', starting and ending with a letter or digit"
        )
    if len(name) > limit:
        return f'name "{name}" is longer than {limit} characters ({engine})'
    if nodes > 1 and len(name) > 54:
        return (
            f'name "{name}" is longer than 54 characters; multi-node Jobs need room '
            "for the <name>-headless Service"
        )
    return None

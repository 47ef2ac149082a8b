"""Resolution of a direct run config (Job or RayJob): its layer stack → one `RunIntent`.

The stack and its merge rules live in `tau.resolve.layers`, where the run is scheduled in
`tau.resolve.placement`, how big it is in `tau.resolve.sizing`, what it mounts in
`tau.resolve.storage`. This module owns the rest of the intent (identity, image, runtime,
experiment, metrics offload) and the order the pieces resolve in, which is also the order
dry-run shows their sources.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, cast

from tau import keys
from tau.errors import UsageError, ValidationError
from tau.render.intent import (
    Engine,
    Experiment,
    Launcher,
    MetricsOffload,
    Profiler,
    Project,
    Provenance,
    RunIntent,
    Script,
    SecretRef,
    SourceImage,
    Tune,
)
from tau.resolve.layers import (
    PLACEHOLDER_NAMESPACE,
    PLACEHOLDER_SERVICE_ACCOUNT,
    PLATFORM,
    RESEARCHER,
    ConfigLayer,
    DescriptorLayer,
    Overrides,
    ProfileLayer,
    Stack,
    WorkspaceLayer,
    agree,
    choose_namespace,
)
from tau.resolve.placement import resolve_placement
from tau.resolve.provenance import Layer, Source, field_path
from tau.resolve.provenance import Provenance as ProvenanceTable
from tau.resolve.sizing import resolve_counts, resolve_gpu_resource, resolve_resources
from tau.resolve.storage import resolve_assets, resolve_output, resolve_storage
from tau.runconfig import models
from tau.runconfig.durations import parse_duration
from tau.runconfig.models import (
    Compute,
    Execution,
    Metrics,
    Offload,
    Policy,
    RunBlock,
    RunConfig,
    Runtime,
    Security,
    Storage,
    Workflow,
)
from tau.version import __version__

DEFAULT_RAY_GPU_IMAGE = "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.56.0-cuda13.0"
DEFAULT_RAY_CPU_IMAGE = "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.54.0"
# This project's runtime image (docker/runtime.Containerfile: Python, tau, Ray): the offload
# sidecar's image when neither the run config nor the platform names one.
DEFAULT_RUNTIME_IMAGE = f"mcr.microsoft.com/aks/ai-runtime/tau:{__version__}"
DEFAULT_OFFLOAD_SOURCE = "stellar-online"
DEFAULT_OFFLOAD_INTERVAL = "2s"


@dataclass
class Resolution:
    intent: RunIntent
    provenance: ProvenanceTable
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    context: str = ""


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
    stack = Stack(config, overrides, descriptor, workspace, profile, dict(env or {}))
    new_id = new_id or _random_id
    model = stack.model
    runtime = model.runtime or Runtime()
    storage = model.storage or Storage()
    execution = model.execution or Execution()
    run = model.run or RunBlock()

    name = _name(stack)
    engine = _engine(stack)
    context = _context(stack)
    workspace_name = _workspace_name(stack)
    namespace = _namespace(stack)
    _check_snapshot_scope(stack)
    placement = resolve_placement(stack)
    counts = resolve_counts(stack, engine)
    image = _image(stack, engine, counts.gpus_per_worker)
    service_account = _service_account(stack)
    volumes, mounts = resolve_storage(stack)
    data_mounted = any(mount.path == "/data" for mount in mounts)
    output = resolve_output(stack, name, data_mounted)
    launcher = cast(Launcher, model.launcher_value)  # one of the launchers the rules allow
    launcher_explicit = bool(execution.launcher)
    stack.record(
        field_path(Execution, "launcher"),
        launcher,
        stack.file(Execution, "launcher") if launcher_explicit else stack.default(engine),
    )
    if launcher == "torchrun":
        stack.record(
            field_path(Execution, "processes_per_node"),
            execution.processes_per_node,
            stack.file(Execution, "processes_per_node")
            if stack.config.is_set(Execution, "processes_per_node")
            else stack.default(),
        )
    restricted = _restricted(stack, runtime)
    for block, name_of, value in (
        (Runtime, "working_dir", runtime.working_dir),
        (Storage, "publish", storage.publish),
        (Storage, "checkpoint", storage.checkpoint),
        (models.Source, "path", run.source.path if run.source else None),
    ):
        if value:
            stack.record(field_path(block, name_of), value, stack.file(block, name_of))
    ttl = _ttl(stack, engine, run)
    experiment = _experiment(model)
    staged = storage.publish == "staged"
    workspace_layer = stack.workspace
    intent = RunIntent(
        name=name,
        namespace=namespace,
        engine=engine,
        launcher=launcher,
        launcher_explicit=launcher_explicit,
        image=image,
        placement=placement,
        provenance=Provenance(
            config_hash=config.config_hash,
            code_sha=code_sha,
            tau_command=argv,
            submission_id=submission_id,
        ),
        script=_script(stack),
        source=_source(stack, run),
        project=_project(stack, run),
        source_entrypoint=model.entrypoint_value if run.source else None,
        configs=_configs(stack, execution),
        nodes=counts.nodes,
        processes_per_node=execution.processes_per_node,
        gpus=counts.gpus,
        workers=counts.workers,
        gpus_per_worker=counts.gpus_per_worker,
        gpu_resource=resolve_gpu_resource(stack),
        resources=resolve_resources(stack, ""),
        head_resources=resolve_resources(stack, "head"),
        worker_resources=resolve_resources(stack, "worker"),
        env=_env(stack, runtime),
        env_secret=_env_secret(stack, runtime),
        pip=tuple(runtime.pip or ()),
        volumes=volumes,
        mounts=mounts,
        output=output,
        staged_publish=staged,
        publication_id=new_id() if staged and not stack.flags.dry_run else None,
        checkpoint=storage.checkpoint,
        image_assets=resolve_assets(stack),
        working_dir=runtime.working_dir,
        restricted=restricted,
        service_account=service_account,
        workload_identity=bool(workspace_layer and workspace_layer.workload_identity),
        ttl_seconds_after_finished=ttl,
        workspace=workspace_name,
        workspace_id=workspace_layer.workspace_id if workspace_layer else None,
        result_scope=workspace_layer.result_scope if workspace_layer else None,
        experiment=experiment,
        tune=_tune(execution, launcher),
        metrics_offload=_offload(stack, output, new_id),
        profiler=_profiler(stack),
        allow_nccl_override=execution.allow_nccl_override,
    )
    if stack.placeholders:
        stack.warnings.append(
            "client dry-run could not resolve "
            + ", ".join(stack.placeholders)
            + "; rendered self-describing placeholders (connect a workspace with "
            "tau/workspace.connection.yaml or set them explicitly)"
        )
    return Resolution(intent, stack.table, stack.warnings, stack.notes, stack.placeholders, context)


# --- identity ---------------------------------------------------------------------------------


def _name(stack: Stack) -> str:
    if stack.flags.run_name:
        return stack.record("name", stack.flags.run_name, stack.flag("TARGET name"))
    model = stack.model
    name = model.run_name
    if not name:
        raise ValidationError(
            f"{stack.config.path}: name is required",
            hint="set name: in the run config",
            owner=RESEARCHER,
        )
    source = stack.file(RunBlock, "name") if model.run and model.run.name else None
    return stack.record("name", name, source or stack.file(RunConfig, "name"))


def _engine(stack: Stack) -> Engine:
    model = stack.model
    # engine_value only yields one of ENGINES.
    engine = cast(Engine, model.engine_value)
    run, workflow, compute = model.run, model.workflow, model.compute
    written: tuple[tuple[type[models.Block], str, str | None], ...] = (
        (RunBlock, "engine", run.engine if run else None),
        (RunConfig, "engine", model.engine),
        (Workflow, "workload_kind", workflow.workload_kind if workflow else None),
        (RunBlock, "workload_kind", run.workload_kind if run else None),
        (Compute, "workload_kind", compute.workload_kind if compute else None),
    )
    for block, name, value in written:
        if value:
            return stack.record("engine", engine, stack.file(block, name))
    return stack.record("engine", engine, Source(Layer.DERIVED, "inferred from compute"))


def _context(stack: Stack) -> str:
    if stack.flags.context:
        return stack.record("context", stack.flags.context, stack.flag("--context"))
    if stack.descriptor:
        return stack.record(
            "context",
            stack.descriptor.context,
            Source(Layer.DESCRIPTOR, stack.descriptor.path),
        )
    return ""


def _workspace_name(stack: Stack) -> str | None:
    policy = stack.model.policy or Policy()
    candidates: list[tuple[str, Source]] = []
    if stack.flags.workspace:
        candidates.append((stack.flags.workspace, stack.flag("--workspace")))
    if policy.workspace:
        candidates.append((policy.workspace, stack.file(Policy, "workspace")))
    if stack.descriptor:
        candidates.append(
            (stack.descriptor.workspace, Source(Layer.DESCRIPTOR, stack.descriptor.path))
        )
    chosen = agree("workspace", candidates)
    if stack.workspace and chosen and stack.workspace.name != chosen[0]:
        raise ValidationError(
            f"workspace is ambiguous: the resolved TauWorkspace is {stack.workspace.name!r} "
            f"but {chosen[1]} names {chosen[0]!r}",
            hint="make --workspace, policy.workspace and the connection descriptor agree",
            owner=RESEARCHER,
        )
    if chosen:
        return stack.record("workspace", chosen[0], chosen[1])
    if stack.workspace:
        return stack.record("workspace", stack.workspace.name, stack.ws("(connected)"))
    return None


def _namespace(stack: Stack) -> str:
    policy = stack.model.policy or Policy()
    explicit: list[tuple[str, Source]] = []
    if stack.flags.namespace:
        explicit.append((stack.flags.namespace, stack.flag("-n/--namespace")))
    if policy.namespace:
        explicit.append((policy.namespace, stack.file(Policy, "namespace")))
    chosen = choose_namespace(explicit, stack.workspace)
    if chosen:
        return stack.record("namespace", *chosen)
    if stack.workspace and stack.workspace.namespace:
        return stack.record("namespace", stack.workspace.namespace, stack.ws("target namespace"))
    return stack.unresolved(
        "namespace",
        PLACEHOLDER_NAMESPACE,
        "set policy.namespace, pass -n, or connect a TauWorkspace",
    )


def _check_snapshot_scope(stack: Stack) -> None:
    policy = stack.model.policy
    if policy and policy.workload_profile_snapshot and stack.flags.dry_run != "client":
        raise UsageError(
            f"{field_path(Policy, 'workload_profile_snapshot')} requires --dry-run=client; "
            "snapshots cannot be used for server dry-run or apply",
            owner=RESEARCHER,
        )


def _service_account(stack: Stack) -> str | None:
    if stack.flags.service_account:
        return stack.record(
            "service_account", stack.flags.service_account, stack.flag("--service-account")
        )
    if stack.workspace and stack.workspace.service_account:
        return stack.record(
            "service_account", stack.workspace.service_account, stack.ws("workload identity")
        )
    if stack.client_dry_run:
        stack.notes.append(
            "client dry-run leaves the service account as a placeholder; use "
            "--dry-run=server to resolve live submission defaults"
        )
        return stack.record(
            "service_account",
            PLACEHOLDER_SERVICE_ACCOUNT,
            Source(Layer.UNRESOLVED, "resolved at submission from the TauWorkspace"),
        )
    return None


def _ttl(stack: Stack, engine: str, run: RunBlock) -> int:
    if engine != "job":
        return keys.DEFAULT_TTL_SECONDS
    setting = "ttl_seconds_after_finished"
    if run.ttl_seconds_after_finished is not None:
        return stack.record(
            setting,
            run.ttl_seconds_after_finished,
            stack.file(RunBlock, "ttl_seconds_after_finished"),
        )
    if stack.workspace and stack.workspace.retention_seconds:
        return stack.record(setting, stack.workspace.retention_seconds, stack.ws("retention"))
    return stack.record(setting, keys.DEFAULT_TTL_SECONDS, stack.default("8h"))


# --- image and code -----------------------------------------------------------------------------


def _image(stack: Stack, engine: str, gpus_per_worker: int) -> str:
    model = stack.model
    image = model.image_value
    if image:
        written = (
            (Runtime, model.runtime.image if model.runtime else None),
            (RunBlock, model.run.image if model.run else None),
            (RunConfig, model.image),
        )
        block = next(block for block, value in written if value)
        return stack.record("image", image, stack.file(block, "image"))
    if engine == "rayjob":
        default = DEFAULT_RAY_GPU_IMAGE if gpus_per_worker > 0 else DEFAULT_RAY_CPU_IMAGE
        return stack.record("image", default, stack.default("Ray runtime image"))
    raise ValidationError(
        "no image: the run config sets no runtime.image and no workload profile provides one",
        hint="set runtime.image (a pinned tag or digest)",
        owner=RESEARCHER,
    )


def _script(stack: Stack) -> Script | None:
    path = stack.config.loaded.entrypoint_path()
    if path is None:
        return None
    model = stack.model
    entry = model.entrypoint_value
    try:
        content = path.read_bytes()
    except OSError as error:
        raise ValidationError(
            f"entrypoint {entry!r}: cannot read {path.name}: {error.strerror}",
            hint="entrypoint paths are relative to the run config",
            owner=RESEARCHER,
        ) from None
    run = model.run or RunBlock()
    written = (
        (RunBlock, "entrypoint", run.entrypoint),
        (RunBlock, "script", run.script),
        (RunConfig, "entrypoint", model.entrypoint),
        (RunConfig, "script", model.script),
    )
    for block, name, value in written:
        if value:
            stack.record("entrypoint", entry, stack.file(block, name))
            break
    return Script(path.name, content)


def _source(stack: Stack, run: RunBlock) -> SourceImage | None:
    source = run.source
    if not source:
        return None
    # The run config rules require both before resolution.
    assert source.image and source.path
    stack.record(
        field_path(models.Source, "image"), source.image, stack.file(models.Source, "image")
    )
    return SourceImage(source.image, source.path)


def _project(stack: Stack, run: RunBlock) -> Project | None:
    working_dir = run.working_dir
    entrypoint = stack.model.entrypoint_value
    if not working_dir or not entrypoint:
        return None
    from tau.resolve.project import package

    stack.record(
        field_path(RunBlock, "working_dir"), working_dir, stack.file(RunBlock, "working_dir")
    )
    return package(stack.config.path.parent, working_dir, entrypoint, run.working_dir_excludes)


# --- runtime, experiment, launchers -----------------------------------------------------------


def _restricted(stack: Stack, runtime: Runtime) -> bool:
    """runtime.security.mode, else restricted when the workspace namespace enforces Pod
    Security `restricted` (its pods would be refused otherwise)."""
    setting = field_path(Security, "mode")
    mode = runtime.security.mode if runtime.security else None
    if mode:
        stack.record(setting, mode, stack.file(Security, "mode"))
        return mode == "restricted"
    if stack.workspace and stack.workspace.pod_security == "restricted":
        source = stack.ws("namespace enforces Pod Security restricted")
        stack.record(setting, "restricted", source)
        return True
    return False


def _env(stack: Stack, runtime: Runtime) -> tuple[tuple[str, str], ...]:
    env = runtime.env or {}
    for name, value in sorted(env.items()):
        stack.record(f"env {name}", value, stack.file(Runtime, "env", name))
    return tuple(sorted(env.items()))


def _configs(stack: Stack, execution: Execution) -> tuple[tuple[str, object], ...]:
    configs = execution.configs or {}
    for name, value in sorted(configs.items()):
        stack.record(f"config {name}", value, stack.file(Execution, "configs", name))
    return tuple(sorted(configs.items()))


def _env_secret(stack: Stack, runtime: Runtime) -> tuple[tuple[str, SecretRef], ...]:
    refs = []
    for name, value in sorted((runtime.env_secret or {}).items()):
        secret, _, key = value.partition(":")
        refs.append((name, SecretRef(secret, key)))
        stack.record(f"env {name}", "<secret>", stack.file(Runtime, "env_secret", name))
    return tuple(refs)


def _experiment(model: RunConfig) -> Experiment:
    experiment = model.experiment
    if experiment is None:
        return Experiment()
    return Experiment(
        project=experiment.project,
        experiment_id=model.experiment_id,
        group=experiment.group,
    )


def _tune(execution: Execution, launcher: str) -> Tune | None:
    if launcher != "ray-tune":
        return None
    return Tune(
        metric=execution.metric or "",
        mode=execution.mode or "min",
        num_samples=execution.num_samples or 1,
        max_concurrent_trials=execution.max_concurrent_trials or 1,
    )


def _offload(stack: Stack, output: str | None, new_id: Callable[[], str]) -> MetricsOffload | None:
    """The sidecar's settings; its image: the platform's, else the config's, else ours."""
    metrics = stack.model.metrics or Metrics()
    offload = metrics.offload
    if not offload or not offload.enabled:
        return None
    env = stack.env
    if env.get(keys.ENV_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT):
        raise ValidationError(
            f"{keys.ENV_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT} is set, but this build's "
            "offloader writes only to the workspace store (remote write is not supported)",
            hint=f"unset {keys.ENV_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT}",
            owner=PLATFORM,
        )
    image = _platform_or_file(
        stack, "image", keys.ENV_METRICS_OFFLOAD_IMAGE, offload.image
    ) or stack.record(
        field_path(Offload, "image"), DEFAULT_RUNTIME_IMAGE, stack.default("runtime image")
    )
    session = new_id()
    out = (
        _platform_or_file(stack, "out", keys.ENV_METRICS_OFFLOAD_OUT, offload.out)
        or f"{output}/.tau/metrics/{session}/offload"
    )
    source = env.get(keys.ENV_METRICS_OFFLOAD_SOURCE) or DEFAULT_OFFLOAD_SOURCE
    interval = env.get(keys.ENV_METRICS_OFFLOAD_INTERVAL) or DEFAULT_OFFLOAD_INTERVAL
    history = tuple(
        entry if entry.startswith("/") else posixpath.join(output or "/data", entry)
        for entry in metrics.history or ()
    )
    stack.record(
        field_path(Metrics, "history"),
        list(history),
        Source(Layer.DERIVED, "relative to storage.output"),
    )
    return MetricsOffload(
        image=image,
        session_id=session,
        history=history,
        out=out,
        source=source,
        interval=interval,
    )


def _profiler(stack: Stack) -> Profiler | None:
    """`profiler.*` as the rules accepted it; nsys captures for 2 minutes unless told."""
    block = stack.model.profiler
    if block is None:
        return None
    mode = cast(Literal["nsys", "ncu"], block.mode)  # the rules allow only these two
    stack.record(field_path(models.Profiler, "mode"), mode, stack.file(models.Profiler, "mode"))
    rank = "0" if block.rank is None else str(block.rank)
    stack.record(
        field_path(models.Profiler, "rank"),
        rank,
        stack.file(models.Profiler, "rank") if block.rank is not None else stack.default(),
    )
    for name in ("warmup", "duration"):
        value = getattr(block, name)
        if value:
            setting = field_path(models.Profiler, name)
            stack.record(setting, value, stack.file(models.Profiler, name))
    warmup = parse_duration(block.warmup) if block.warmup else None
    duration = parse_duration(block.duration) if block.duration else None
    if duration is None and mode == "nsys":
        duration = parse_duration(models.NSYS_DEFAULT_DURATION)
        stack.record(
            field_path(models.Profiler, "duration"),
            models.NSYS_DEFAULT_DURATION,
            stack.default("nsys"),
        )
    return Profiler(mode=mode, rank=rank, warmup=warmup, duration=duration)


def _platform_or_file(stack: Stack, name: str, env_name: str, value: str | None) -> str | None:
    """Platform env overrides win over the run config for offload settings."""
    setting = field_path(Offload, name)
    if stack.env.get(env_name):
        return stack.record(setting, stack.env[env_name], Source(Layer.ENV, env_name))
    if value:
        return stack.record(setting, value, stack.file(Offload, name))
    return None


def _random_id() -> str:
    import secrets

    return secrets.token_hex(12)

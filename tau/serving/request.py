"""`tau serve deploy` as data: the flags a researcher typed, checked before any cluster read.

`DeployRequest` holds the flags exactly as given (None/0/empty meaning "not given", which
decides defaults and what may be combined); `check` refuses every combination that cannot
mean anything, naming the flag. Only what needs the workload profile is decided later
(`tau.serving.plan`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tau import keys
from tau.errors import UsageError
from tau.render.endpoint import FLAGS
from tau.serving import flags
from tau.serving.checkpoint import CheckpointRequest, parse_checkpoint_ref

KINDS = ("rayservice", "deployment")
DRY_RUN_MODES = ("client", "server")
INT32_MAX = 2147483647
DEFAULT_PORT = 8000
DEFAULT_RAY_QPS = 5
DEFAULT_SCALE_DOWN_DELAY = 300
HANDOFF = "serving uses the namespace and context from the platform handoff"


@dataclass(frozen=True)
class DeployRequest:
    name: str
    namespace: str = ""
    context: str = ""
    profile: str = ""
    kind: str = "rayservice"
    image: str = ""
    dry_run: str = ""
    snapshot: str = ""
    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int = 0
    target_qps: int | None = None
    scale_down_delay: int | None = None
    import_path: str = ""
    app_args: str = ""
    port: int = 0
    ray_version: str = ""
    runtime_pip: tuple[str, ...] = ()
    deployment_ports: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    env_secret: tuple[str, ...] = ()
    init: tuple[str, ...] = ()
    sidecar: tuple[str, ...] = ()
    volume: tuple[str, ...] = ()
    mount: tuple[str, ...] = ()
    checkpoint: str = ""
    checkpoint_pvc: str = ""
    from_finetune: str = ""
    checkpoint_ref: str = ""
    from_model: str = ""
    model_ref: str = ""
    readiness_path: str = ""
    startup_path: str = ""
    liveness_path: str = ""
    startup_failure_threshold: int = 0
    service_port: int = 0
    service_target_port: int = 0
    args: str = ""
    arg: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    shm_size: str = ""
    gpus: int | None = None
    nodes: int = 0
    cpu: str = ""
    memory: str = ""
    argv: tuple[str, ...] = field(default=(), compare=False)

    @property
    def rayservice(self) -> bool:
        return self.kind == "rayservice"


# Flags that shape only one kind; given for the other they would change nothing.
RAYSERVICE_ONLY = {
    "import_path": "--import-path",
    "app_args": "--app-args",
    "port": "--port",
    "ray_version": "--ray-version",
    "runtime_pip": "--runtime-pip",
    "nodes": "--nodes",
}
DEPLOYMENT_ONLY = {
    "deployment_ports": "--deployment-port",
    "command": "--command",
    "arg": "--arg",
    "init": "--init",
    "sidecar": "--sidecar",
    "readiness_path": "--readiness-path",
    "startup_path": "--startup-path",
    "liveness_path": "--liveness-path",
    "startup_failure_threshold": "--startup-failure-threshold",
    "service_port": "--service-port",
    "service_target_port": "--service-target-port",
}


def usage(message: str, hint: str = "") -> UsageError:
    return UsageError(message, hint=hint, owner=FLAGS)


def check_common(namespace: str, kind: str) -> None:
    """What every serve verb needs: an explicit namespace and a known kind."""
    if kind not in KINDS:
        raise usage(f"--kind must be one of: {', '.join(KINDS)} (got {flags.echo(kind)})")
    if not namespace:
        raise usage(
            "-n/--namespace is required",
            hint=f"{HANDOFF}; tau/workspace.connection.yaml is not read",
        )


def check(request: DeployRequest) -> None:
    """Every flag-only refusal of `deploy`, in the order a reader scans the command."""
    if not request.profile:
        raise usage("--profile is required (e.g. model-serve)")
    check_common(request.namespace, request.kind)
    if request.dry_run and request.dry_run not in DRY_RUN_MODES:
        raise usage("--dry-run must be one of: client, server")
    if request.snapshot and request.dry_run != "client":
        raise usage(
            "--workload-profile-snapshot requires --dry-run=client",
            hint="server dry-run and deploy read the live TauCluster profiles",
        )
    other = DEPLOYMENT_ONLY if request.rayservice else RAYSERVICE_ONLY
    wanted = "deployment" if request.rayservice else "rayservice"
    for attr, flag in other.items():
        if getattr(request, attr):
            raise usage(f"{flag} applies only to --kind {wanted}")
    _check_scaling(request)
    _check_commands(request)
    _check_ports(request)
    _check_checkpoint(request)
    if request.shm_size:
        flags.quantity("--shm-size", request.shm_size)
    if request.cpu:
        flags.quantity("--cpu", request.cpu)
    if request.memory:
        flags.quantity("--memory", request.memory)
    if request.gpus is not None and request.gpus < 0:
        raise usage(f"--gpus {request.gpus} must be >= 0")
    if request.nodes and not 2 <= request.nodes <= INT32_MAX:
        raise usage(
            f"--nodes {request.nodes} must be between 2 and {INT32_MAX}",
            hint="omit --nodes for a single-node service",
        )
    if request.startup_failure_threshold:
        if request.startup_failure_threshold < 1:
            raise usage("--startup-failure-threshold must be >= 1")
        if not request.startup_path:
            raise usage("--startup-failure-threshold needs --startup-path")


def _check_scaling(request: DeployRequest) -> None:
    if request.replicas is not None and request.replicas < 1:
        raise usage(
            f"--replicas {request.replicas} must be >= 1",
            hint="remove an endpoint with `tau serve delete`",
        )
    if request.max_replicas < 0:
        raise usage(f"--max-replicas {request.max_replicas} must be >= 0")
    if request.max_replicas == 0:
        for attr, flag in (
            ("min_replicas", "--min-replicas"),
            ("target_qps", "--target-qps"),
            ("scale_down_delay", "--scale-down-delay"),
        ):
            if getattr(request, attr) is not None:
                raise usage(f"{flag} needs --max-replicas > 0 (autoscaling)")
        return
    if request.replicas is not None:
        raise usage(
            "--replicas and --max-replicas are mutually exclusive",
            hint="--max-replicas enables autoscaling between --min-replicas and it",
        )
    low = 0 if request.rayservice else 1
    minimum = 1 if request.min_replicas is None else request.min_replicas
    if minimum < low:
        raise usage(f"--min-replicas {minimum} must be >= {low} for --kind {request.kind}")
    if minimum > request.max_replicas:
        raise usage(f"--min-replicas {minimum} exceeds --max-replicas {request.max_replicas}")
    if request.target_qps is not None and request.target_qps < 0:
        raise usage(f"--target-qps {request.target_qps} must be >= 0")
    if request.scale_down_delay is not None and request.scale_down_delay < 0:
        raise usage(f"--scale-down-delay {request.scale_down_delay} must be >= 0")
    if not request.rayservice and not request.cpu:
        raise usage(
            "--max-replicas on --kind deployment needs --cpu",
            hint="the HorizontalPodAutoscaler scales on CPU utilization of the request",
        )


def _check_commands(request: DeployRequest) -> None:
    if request.arg and request.args:
        raise usage("--arg and --args are mutually exclusive", hint="use one --arg per argument")
    if request.app_args:
        if not request.import_path:
            raise usage("--app-args requires an explicit --import-path")
        for given, flag in (
            (request.replicas is not None, "--replicas"),
            (request.max_replicas > 0, "--max-replicas"),
            (bool(request.args), "--args"),
        ):
            if given:
                raise usage(f"--app-args cannot be combined with {flag}")
    if request.nodes and request.args:
        raise usage("--args cannot be used with --nodes (multi-node head runs no user command)")


def _check_ports(request: DeployRequest) -> None:
    if request.port:
        flags.check_port("--port", request.port, zero_ok=False)
    flags.check_port("--service-port", request.service_port)
    flags.check_port("--service-target-port", request.service_target_port)
    if request.service_target_port and not request.service_port:
        raise usage("--service-target-port needs --service-port")


def _check_checkpoint(request: DeployRequest) -> None:
    sources = [
        flag
        for flag, value in (
            ("--checkpoint", request.checkpoint),
            ("--from-finetune", request.from_finetune),
            ("--checkpoint-ref", request.checkpoint_ref),
            ("--from-model", request.from_model),
            ("--model-ref", request.model_ref),
        )
        if value
    ]
    if len(sources) > 1:
        raise usage(f"{' and '.join(sources)} are mutually exclusive: give one checkpoint source")
    if request.checkpoint_pvc and not sources:
        raise usage(
            "--checkpoint-pvc needs a checkpoint: --checkpoint, --from-finetune or --from-model"
        )
    live = [flag for flag in sources if flag != "--checkpoint"]
    if live and request.dry_run == "client":
        raise usage(
            f"{live[0]} reads Kubernetes metadata, so it cannot be used with --dry-run=client",
            hint="use --dry-run=server or deploy",
        )


def checkpoint_request(request: DeployRequest) -> CheckpointRequest:
    run, artifact = request.from_finetune, ""
    if request.checkpoint_ref:
        run, artifact = parse_checkpoint_ref(request.checkpoint_ref)
    model = request.from_model or request.model_ref
    if model:
        from tau.data.refs import parse_model

        parse_model(model)  # a malformed reference fails before any cluster read
    return CheckpointRequest(
        path=request.checkpoint,
        finetune=run,
        artifact=artifact,
        model=model,
        pvc=request.checkpoint_pvc or keys.DEFAULT_PVC,
        pvc_explicit=bool(request.checkpoint_pvc),
    )

"""`tau serve`: deploy, inspect, scale and remove an online endpoint.

Flags -> `tau.serving` -> print. Serving targets the namespace and context handed over by
the platform, passed explicitly; it never reads tau/workspace.connection.yaml.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click
import typer

from tau import keys
from tau.cli.output import Output, emit, output_option, print_table
from tau.errors import clean

HANDOFF = (
    "Serving uses the namespace (-n) and kube context (--context) from your platform handoff, "
    "passed explicitly; it does not read the repository's tau/workspace.connection.yaml."
)

app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    help=(
        "Render and manage serving deployments: a Ray Serve application (RayService) or a "
        f"plain Deployment, admitted through Kueue.\n\n{HANDOFF}\n\n"
        "Examples:\n\n"
        "  tau serve deploy policy --profile model-serve --image IMG \\\n"
        "    --checkpoint market-policy -n research --dry-run=client\n\n"
        "  tau serve status policy -n research -o json\n\n"
        "  tau serve scale web --kind deployment --replicas 3 -n research\n\n"
        "  tau serve delete policy -n research"
    ),
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def namespace_option() -> Any:
    return typer.Option(
        "", "-n", "--namespace", help="Target namespace from the platform handoff (required)."
    )


def context_option() -> Any:
    return typer.Option(
        "",
        "--context",
        envvar=keys.ENV_CONTEXT,
        show_envvar=True,
        help="Kube context from the platform handoff (default: $TAU_CONTEXT, else the "
        "kubeconfig's current context).",
    )


def kind_option() -> Any:
    return typer.Option("rayservice", "--kind", help="rayservice (default) or deployment.")


def _many(values: list[str] | None) -> tuple[str, ...]:
    return tuple(values or ())


@app.command(
    help="Render and deploy an endpoint (server-side apply: a redeploy updates it).\n\n"
    + HANDOFF
    + "\n\n--kind rayservice (default) renders a KubeRay RayService running the Ray Serve "
    "application at --import-path; --kind deployment renders a Deployment (optionally with a "
    "Service and an HPA) for a plain HTTP server. The workload profile (--profile) is read "
    "from the TauCluster, fail-closed, and the namespace's platform-managed default "
    "LocalQueue is stamped; without one nothing is created.\n\n"
    "--checkpoint mounts --checkpoint-pvc read-only at /data, resolves projects/... under "
    "/data and other relative paths under /data/checkpoints, and sets TAU_MODEL_PATH. "
    "--from-finetune and --from-model read cluster metadata, so they need --dry-run=server "
    "or a live deploy."
)
def deploy(
    name: str = typer.Argument(..., metavar="NAME", help="Service name."),
    profile: str = typer.Option("", "--profile", help="Serving workload profile (required)."),
    kind: str = kind_option(),
    image: str = typer.Option("", "--image", help="Pinned serving image."),
    namespace: str = namespace_option(),
    context: str = context_option(),
    dry_run: str = typer.Option(
        "", "--dry-run", help="client: print the objects; server: let the API server validate."
    ),
    snapshot: str = typer.Option(
        "",
        "--workload-profile-snapshot",
        help="Saved TauWorkloadProfileSnapshot: fully offline --dry-run=client.",
    ),
    replicas: int = typer.Option(None, "--replicas", help="Fixed replica count (default 1)."),
    min_replicas: int = typer.Option(None, "--min-replicas", help="Autoscaling floor (1)."),
    max_replicas: int = typer.Option(0, "--max-replicas", help=">0 enables autoscaling."),
    target_qps: int = typer.Option(
        None,
        "--target-qps",
        help="Autoscaling target: ongoing requests per replica (rayservice, default 5) or "
        "http_requests_per_second per pod (deployment, default off).",
    ),
    scale_down_delay: int = typer.Option(
        None, "--scale-down-delay", help="Seconds before scaling down (300)."
    ),
    import_path: str = typer.Option(
        "", "--import-path", help="rayservice: Serve application import path (serve:app)."
    ),
    app_args: str = typer.Option(
        "", "--app-args", help="rayservice: JSON/YAML file of application builder args."
    ),
    port: int = typer.Option(0, "--port", help="rayservice: Serve HTTP port (8000)."),
    ray_version: str = typer.Option(
        "", "--ray-version", help="rayservice: Ray version (default: from the image tag, 2.40.0)."
    ),
    runtime_pip: list[str] = typer.Option(None, "--runtime-pip", help="rayservice: pip package."),
    deployment_port: list[str] = typer.Option(
        None, "--deployment-port", help="deployment: container port (repeatable, a,b)."
    ),
    env: list[str] = typer.Option(None, "--env", help="KEY=VALUE (repeatable)."),
    env_secret: list[str] = typer.Option(
        None, "--env-secret", help="KEY=SECRET:KEY from a Secret (repeatable)."
    ),
    init: list[str] = typer.Option(None, "--init", help="deployment: init container NAME=IMAGE."),
    sidecar: list[str] = typer.Option(None, "--sidecar", help="deployment: sidecar NAME=IMAGE."),
    volume: list[str] = typer.Option(
        None, "--volume", help="NAME=KIND[:SOURCE], KIND pvc|emptyDir|configMap|secret."
    ),
    mount: list[str] = typer.Option(None, "--mount", help="NAME:PATH[:ro|rw] of a --volume."),
    checkpoint: str = typer.Option("", "--checkpoint", help="Model state path on the PVC."),
    checkpoint_pvc: str = typer.Option(
        "", "--checkpoint-pvc", help="PVC holding the checkpoint (blob-training)."
    ),
    from_finetune: str = typer.Option(
        "", "--from-finetune", help="Completed run whose recorded checkpoint to serve."
    ),
    checkpoint_ref: str = typer.Option(
        "", "--checkpoint-ref", help="finetune/RUN[:ARTIFACT] (like --from-finetune)."
    ),
    from_model: str = typer.Option(
        "", "--from-model", help="Model registry reference MODEL:ALIAS or MODEL@RUN."
    ),
    model_ref: str = typer.Option("", "--model-ref", help="Alias of --from-model."),
    readiness_path: str = typer.Option("", "--readiness-path", help="deployment: HTTP path."),
    startup_path: str = typer.Option("", "--startup-path", help="deployment: HTTP path."),
    liveness_path: str = typer.Option("", "--liveness-path", help="deployment: HTTP path."),
    startup_failure_threshold: int = typer.Option(
        0, "--startup-failure-threshold", help="deployment: startup probe failures allowed."
    ),
    service_port: int = typer.Option(
        0, "--service-port", help="deployment: ClusterIP Service port (0: no Service)."
    ),
    service_target_port: int = typer.Option(
        0, "--service-target-port", help="deployment: Service target port."
    ),
    args: str = typer.Option("", "--args", help="Container args, whitespace-separated."),
    arg: list[str] = typer.Option(None, "--arg", help="deployment: one container arg."),
    command: list[str] = typer.Option(None, "--command", help="deployment: command word."),
    shm_size: str = typer.Option("", "--shm-size", help="Memory-backed /dev/shm size, e.g. 16Gi."),
    gpus: int = typer.Option(None, "--gpus", help="GPUs per pod (must match the profile)."),
    nodes: int = typer.Option(
        0, "--nodes", help="rayservice: GPU worker nodes (>= 2, the profile's workerCount)."
    ),
    cpu: str = typer.Option("", "--cpu", help="CPU request per serving pod, e.g. 2."),
    memory: str = typer.Option("", "--memory", help="Memory request and limit, e.g. 8Gi."),
    output: str = typer.Option(
        "yaml", "-o", "--output", help="--dry-run=client output: yaml or json."
    ),
) -> None:
    from tau.serving.deploy import checkpoint_note, success_lines
    from tau.serving.deploy import deploy as run_deploy
    from tau.serving.request import DeployRequest

    if output not in ("yaml", "json"):
        from tau.errors import UsageError

        raise UsageError("--output must be one of: yaml, json (for --dry-run=client)")
    request = DeployRequest(
        name=name,
        namespace=namespace,
        context=context,
        profile=profile,
        kind=kind,
        image=image,
        dry_run=dry_run,
        snapshot=snapshot,
        replicas=replicas,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        target_qps=target_qps,
        scale_down_delay=scale_down_delay,
        import_path=import_path,
        app_args=app_args,
        port=port,
        ray_version=ray_version,
        runtime_pip=_many(runtime_pip),
        deployment_ports=_many(deployment_port),
        env=_many(env),
        env_secret=_many(env_secret),
        init=_many(init),
        sidecar=_many(sidecar),
        volume=_many(volume),
        mount=_many(mount),
        checkpoint=checkpoint,
        checkpoint_pvc=checkpoint_pvc,
        from_finetune=from_finetune,
        checkpoint_ref=checkpoint_ref,
        from_model=from_model,
        model_ref=model_ref,
        readiness_path=readiness_path,
        startup_path=startup_path,
        liveness_path=liveness_path,
        startup_failure_threshold=startup_failure_threshold,
        service_port=service_port,
        service_target_port=service_target_port,
        args=args,
        arg=_many(arg),
        command=_many(command),
        shm_size=shm_size,
        gpus=gpus,
        nodes=nodes,
        cpu=cpu,
        memory=memory,
    )
    deployed = run_deploy(request)
    for note in deployed.notes:
        click.echo(f"note: {note}", err=True)
    for warning in deployed.warnings:
        click.echo(f"warning: API server: {clean(warning)}", err=True)
    if deployed.mode == "client":
        from tau.run.manifests import dump

        checkpoint_hint = checkpoint_note(deployed.intent)
        if checkpoint_hint:
            click.echo(f"note: {checkpoint_hint}", err=True)
        sys.stdout.write(dump(deployed.objects, output))
        return
    for line in success_lines(deployed, context):
        click.echo(line)


@app.command(
    help="Show an endpoint's health: serve status, applications and deployments "
    "(rayservice) or ready/desired/available replicas (deployment).\n\n" + HANDOFF
)
def status(
    name: str = typer.Argument(..., metavar="NAME", help="Service name."),
    kind: str = kind_option(),
    namespace: str = namespace_option(),
    context: str = context_option(),
    output: Output = output_option(),
) -> None:
    from tau.kube import KubeClient
    from tau.serving import manage
    from tau.serving.request import check_common

    check_common(namespace, kind)
    record = manage.status(KubeClient(None, context), kind, name, namespace)
    emit(record, output, table=lambda: _status_table(record))


def _status_table(record: dict[str, Any]) -> None:
    from tau.serving.manage import age

    if record["kind"] == "rayservice":
        ready = "True" if record["ready"] else "False"
        print_table(
            ["name", "status", "ready", "age"],
            [[record["name"], record["status"], ready, age(record["created"])]],
        )
        rows = [[app["name"], "", app["status"], app["message"]] for app in record["applications"]]
        for app in record["applications"]:
            rows += [
                [app["name"], dep["name"], dep["status"], dep["message"]]
                for dep in app["deployments"]
            ]
        if rows:
            click.echo()
            print_table(["application", "deployment", "status", "message"], rows)
    else:
        print_table(
            ["name", "ready", "desired", "available", "age"],
            [
                [
                    record["name"],
                    record["ready"],
                    record["desired"],
                    record["available"],
                    age(record["created"]),
                ]
            ],
        )
        scaling = record["autoscaling"]
        if scaling:
            click.echo(
                f"\nautoscaling: {scaling['minReplicas']}..{scaling['maxReplicas']} replicas"
                f" (current {scaling['currentReplicas']})"
            )
    if record["endpoint"]:
        click.echo(f"\nendpoint: {record['endpoint']} (in-cluster)")


@app.command(
    help="Set a Deployment endpoint's replica count. A RayService is resized by "
    "redeploying with --replicas (its Serve config is a serialized field).\n\n" + HANDOFF
)
def scale(
    name: str = typer.Argument(..., metavar="NAME", help="Service name."),
    kind: str = kind_option(),
    replicas: int = typer.Option(None, "--replicas", help="Desired replicas (>= 0)."),
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.kube import KubeClient
    from tau.serving import manage
    from tau.serving.request import check_common

    check_common(namespace, kind)
    count = manage.scale(KubeClient(None, context), kind, name, namespace, replicas)
    click.echo(f"scaled deployment/{name} to {count} replicas (ns={namespace})")


@app.command(
    help="Remove an endpoint and the Service/HPA tau serve created for it "
    "(idempotent).\n\n" + HANDOFF
)
def delete(
    name: str = typer.Argument(..., metavar="NAME", help="Service name."),
    kind: str = kind_option(),
    namespace: str = namespace_option(),
    context: str = context_option(),
    wait: bool = typer.Option(
        True,
        "--wait/--no-wait",
        help="Return only once the endpoint is gone (its pods terminated), as kubectl does.",
    ),
    timeout: float = typer.Option(
        300.0, "--timeout", min=1.0, help="Seconds --wait waits for the endpoint to be gone."
    ),
) -> None:
    from tau.kube import KubeClient
    from tau.serving import manage
    from tau.serving.request import check_common

    check_common(namespace, kind)
    client = KubeClient(None, context)
    deleted = manage.delete(client, kind, name, namespace)
    if not deleted:
        click.echo(f"{kind} {name} not found in namespace {namespace}; nothing to delete")
        return
    if wait:
        manage.wait_gone(client, kind, name, namespace, timeout, progress=_waiting(name))
    for item in deleted:
        click.echo(f"deleted {item} (ns={namespace})")


def _waiting(name: str) -> Callable[[float], None]:
    """Say once, on stderr, that the delete is waiting, then every 15 s how long."""
    said = [-1]

    def report(elapsed: float) -> None:
        bucket = int(elapsed // 15)
        if bucket != said[0]:
            said[0] = bucket
            click.echo(f"waiting for {name} to terminate ({elapsed:.0f}s)", err=True)

    return report

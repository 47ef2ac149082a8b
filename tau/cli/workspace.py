"""`tau workspace`: connect a repository to its workspace; inspect, create and adopt workspaces."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import typer

from tau import keys
from tau.api.connection import DEFAULT_SYSTEM_NAMESPACE
from tau.cli.groups import TargetGroup
from tau.cli.options import context_option
from tau.cli.output import Output, dump_yaml, emit, output_option, print_records, print_table
from tau.errors import UsageError

if TYPE_CHECKING:
    from tau.api.connection import WorkspaceConnection
    from tau.connection import ConnectionSource, Interaction
    from tau.kube import KubeClient
    from tau.workspace.authoring import Rendered

app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    help="Connect this repository to its TauWorkspace; inspect, create and adopt workspaces.\n\n"
    "Researchers: `connection`, `list`, `status`, `check`, `quota`, `init-repo`. "
    "Platform operators: `create`, `adopt` (preview by default; --apply writes).",
)
connection_app = typer.Typer(
    rich_markup_mode=None,
    cls=TargetGroup,
    add_completion=False,
    help="Verify and pin this repository's workspace connection.\n\n"
    "Reads tau/workspace.connection.yaml (or this checkout's local assignment), isolates the "
    "named kube context into a private kubeconfig, and checks the TauWorkspace is Ready, its "
    "LocalQueue exists and you hold the researcher permissions. Every failure names its layer "
    "(descriptor, access, workspace readiness, authorization) and who fixes it.",
)
quota_app = typer.Typer(
    rich_markup_mode=None, add_completion=False, no_args_is_help=True, help="Workspace quota."
)
app.add_typer(connection_app, name="connection")
app.add_typer(quota_app, name="quota")


def system_namespace_option(short: bool = False) -> Any:
    """`--system-namespace`; `-n` too where no workload namespace flag claims it."""
    flags = ("-n", "--system-namespace") if short else ("--system-namespace",)
    return typer.Option(
        DEFAULT_SYSTEM_NAMESPACE,
        *flags,
        help="Namespace holding TauWorkspace objects (the TauGrid system namespace).",
    )


def project_option() -> Any:
    return typer.Option("", "--project", help="Project of a monorepo catalog (tau.projects.yaml).")


def _kube(context: str) -> KubeClient:
    from tau.kube import KubeClient

    return KubeClient(None, context)


def _say(text: str) -> None:
    click.echo(text, err=True)


def _ask(question: str) -> str:
    click.echo(question, err=True, nl=False)
    return sys.stdin.readline()


def _interaction() -> Interaction:
    from tau.connection import Interaction

    return Interaction(interactive=sys.stdin.isatty(), ask=_ask, say=_say)


def _lines(pairs: list[tuple[str, str]]) -> None:
    width = max(len(label) for label, _ in pairs) + 2
    for label, value in pairs:
        typer.echo(f"{label + ':':<{width}}{value}")


def _project_pair(source: ConnectionSource) -> list[tuple[str, str]]:
    """The Project line, shown only for a monorepo catalog's project."""
    return [("Project", source.project)] if source.project else []


def _authorization_text(descriptor: WorkspaceConnection) -> str:
    text = descriptor.authorization.mode
    if descriptor.authorization.requiredRole:
        text += f" (role {descriptor.authorization.requiredRole})"
    return text


# --- connection ------------------------------------------------------------------------------


@connection_app.callback(invoke_without_command=True)
def connection(
    ctx: typer.Context,
    path: str = typer.Argument(
        None, help="Descriptor file, or a directory to discover from (default: .)."
    ),
    offline: bool = typer.Option(
        False, "--offline", help="Validate the repository mapping and descriptor only."
    ),
    project: str = project_option(),
    output: Output = output_option(),
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    from tau.api.connection import check_tau_version
    from tau.connection import discover_connection
    from tau.version import __version__

    start, descriptor_path = ".", None
    if path:
        target = Path(path)
        if not target.exists():
            raise UsageError(f"PATH {path}: no such descriptor file or directory")
        if target.is_dir():
            start = path
        else:
            start, descriptor_path = str(target.parent), path
    source = discover_connection(start, project=project, descriptor_path=descriptor_path)
    descriptor = source.descriptor
    check_tau_version(descriptor, __version__)
    data = {
        "project": source.project,
        "workspace": descriptor.workspace,
        "source": source.kind,
        "descriptor": source.shown,
        "context": descriptor.context_name,
        "systemNamespace": descriptor.system_namespace,
        "accessMethod": descriptor.access.method,
        "authorization": {
            "mode": descriptor.authorization.mode,
            "requiredRole": descriptor.authorization.requiredRole,
        },
        "privateCluster": descriptor.private_cluster,
    }
    if offline:
        data["checked"] = "offline"

        def table() -> None:
            typer.echo("Workspace connection configuration is valid.")
            _lines(_identity_pairs(source))
            typer.echo("Cluster access was not checked.")

        emit(data, output, table=table)
        return

    from tau.connection import connect

    result = connect(source, _interaction())
    state = result.state
    data.update(
        checked="live",
        status="Ready",
        namespace=state.namespace,
        queue=state.queue,
        serviceAccount=state.service_account,
        workspaceUID=state.workspace_uid,
        kubeconfig=str(result.kubeconfig),
        verifiedAt=state.verified_at,
    )

    def connected() -> None:
        typer.echo("Connected.")
        pairs = [
            *_project_pair(source),
            ("Workspace", descriptor.workspace),
            ("Descriptor", source.shown),
            ("Status", "Ready"),
            ("Namespace", state.namespace),
            ("Queue", state.queue),
            ("Authorization", _authorization_text(descriptor)),
            ("Ready", "tau run can now use this workspace."),
        ]
        _lines(pairs)

    emit(data, output, table=connected)


def _identity_pairs(source: ConnectionSource) -> list[tuple[str, str]]:
    descriptor = source.descriptor
    pairs = [
        *_project_pair(source),
        ("Workspace", descriptor.workspace),
        ("Descriptor", source.shown),
        ("Context", descriptor.context_name),
        ("Access method", descriptor.access.method),
        ("Authorization", _authorization_text(descriptor)),
    ]
    if descriptor.private_cluster and descriptor.network is not None:
        pairs.append(("Private network", descriptor.network.instructions or ""))
    return pairs


@connection_app.command("assign")
def connection_assign(
    workspace: str = typer.Argument(
        "", help="TauWorkspace name (default: the cluster's active workspace)."
    ),
    context: str = context_option(),
    system_namespace: str = system_namespace_option(),
    authorization_mode: str = typer.Option(
        "workspace-rbac", "--authorization-mode", help="workspace-rbac or cluster-wide."
    ),
    required_role: str = typer.Option(
        "tau-researcher-v1", "--required-role", help="Role expected in workspace-rbac mode."
    ),
    aks_resource_id: str = typer.Option("", "--aks-resource-id", help="AKS ARM resource ID."),
    aks_tenant_id: str = typer.Option("", "--aks-tenant-id", help="Entra tenant ID (UUID)."),
    replace: bool = typer.Option(False, "--replace", help="Replace an existing assignment."),
) -> None:
    """Store a connection for this checkout only (when no descriptor is checked in)."""
    from tau.api.connection import validate_descriptor
    from tau.connection import (
        DescriptorNotFound,
        active_workspace,
        find_descriptor,
        find_repository,
        save_assignment,
    )
    from tau.version import __version__

    repository = find_repository(".")
    try:
        found = find_descriptor(Path("."), repository)
    except DescriptorNotFound:
        found = None
    if found is not None:
        raise UsageError(
            f"{repository.relative(found)} is checked in and always wins; local assignments "
            "apply only to repositories without a descriptor"
        )
    if not context:
        raise UsageError("--context is required (or set $TAU_CONTEXT)")
    if not workspace:
        workspace = active_workspace(_kube(context), system_namespace)
    access: dict[str, object] = {"method": "kubeconfig"}
    if aks_resource_id or aks_tenant_id:
        access = {
            "method": "aks",
            "aks": {"resourceID": aks_resource_id, "tenantID": aks_tenant_id},
        }
    authorization: dict[str, object] = {"mode": authorization_mode}
    if authorization_mode != "cluster-wide":
        authorization["requiredRole"] = required_role
    descriptor = validate_descriptor(
        {
            "schema": "tau.workspace.connection.v1",
            "workspace": workspace,
            "cluster": {"contextName": context, "systemNamespace": system_namespace},
            "access": access,
            "authorization": authorization,
            "requirements": {"minTauVersion": __version__},
        },
        "local assignment",
    )
    path, changed = save_assignment(repository, descriptor, replace=replace)
    verb = "Assigned" if changed else "Already assigned"
    typer.echo(f"{verb} workspace {workspace} (context {context}) to this checkout: {path}")
    typer.echo("Run `tau workspace connection` to verify and pin it.")


@connection_app.command("inspect")
def connection_inspect(project: str = project_option(), output: Output = output_option()) -> None:
    """Show the effective connection source and its pin, without contacting the cluster."""
    from tau.connection import discover_connection, is_fresh, load_state, pin_changes, state_path

    source = discover_connection(".", project=project)
    descriptor = source.descriptor
    state = load_state(state_path(source))
    changes = pin_changes(state, source, "") if state else []
    data = {
        "source": source.kind,
        "path": source.shown,
        "project": source.project,
        "workspace": descriptor.workspace,
        "context": descriptor.context_name,
        "accessMethod": descriptor.access.method,
        "authorization": _authorization_text(descriptor),
        "pinned": state is not None and not changes,
        "drift": changes,
        "namespace": state.namespace if state else None,
        "queue": state.queue if state else None,
        "verifiedAt": state.verified_at if state else None,
        "readinessFresh": bool(state and is_fresh(state)),
    }

    def table() -> None:
        pin = "not pinned on this machine"
        if state is not None:
            pin = "pinned" if not changes else "changed since pinned: " + "; ".join(changes)
        _lines(
            [
                ("Source", f"{source.kind} ({source.shown})"),
                *_project_pair(source),
                ("Workspace", descriptor.workspace),
                ("Context", descriptor.context_name),
                ("Authorization", _authorization_text(descriptor)),
                ("Pin", pin),
                ("Namespace", state.namespace if state else "-"),
                ("Queue", state.queue if state else "-"),
                ("Verified", state.verified_at if state else "-"),
            ]
        )

    emit(data, output, table=table)


@connection_app.command("clear")
def connection_clear() -> None:
    """Remove this checkout's local assignment (a checked-in descriptor is untouched)."""
    from tau.connection import clear_assignment, find_repository

    removed = clear_assignment(find_repository("."))
    if removed is None:
        typer.echo("No local assignment for this checkout.")
    else:
        typer.echo(f"Removed local assignment {removed}.")


# --- list / status / check -------------------------------------------------------------------


@app.command("list")
def list_(
    system_namespace: str = system_namespace_option(short=True),
    context: str = context_option(),
    output: Output = output_option(),
) -> None:
    """List TauWorkspaces (v0 activates one; others report AdditionalWorkspaceBlocked)."""
    from tau.workspace.inspect import list_workspaces

    rows = list_workspaces(_kube(context), system_namespace)
    columns = ("name", "phase", "namespace", "queue", "authorization", "created")
    emit(
        rows,
        output,
        table=lambda: print_records(columns, rows),
    )


def _status_table(status: dict[str, Any]) -> None:
    resolved = status["resolved"]
    _lines(
        [
            ("Name", status["name"]),
            ("Phase", status["phase"]),
            ("Namespace", resolved["namespace"] or "-"),
            ("Queue", resolved["localQueue"] or "-"),
            ("Authorization", status["authorization"]["mode"]),
        ]
    )
    if status["conditions"]:
        print_table(
            ("type", "status", "reason", "message", "owner"),
            [
                [c["type"], c["status"], c["reason"], c["message"], c["owner"] or "-"]
                for c in status["conditions"]
            ],
        )


@app.command("status")
def status(
    name: str = typer.Argument(..., help="TauWorkspace name."),
    system_namespace: str = system_namespace_option(short=True),
    context: str = context_option(),
    output: Output = output_option(),
) -> None:
    """Phase, resolved namespace/queue and every condition with the owner of its fix."""
    from tau.workspace.inspect import get_workspace, workspace_status

    data = workspace_status(get_workspace(_kube(context), name, system_namespace))
    emit(data, output, table=lambda: _status_table(data))


@app.command("check")
def check(
    name: str = typer.Argument(..., help="TauWorkspace name."),
    data_pvc: str = typer.Option(
        "", "--data-pvc", help="Also check this PVC in the workspace namespace (Bound/missing)."
    ),
    system_namespace: str = system_namespace_option(short=True),
    context: str = context_option(),
    output: Output = output_option(),
) -> None:
    """Exit non-zero unless the workspace is Ready at its current generation.

    With --data-pvc the claim is reported on its own line (and warned about unless Bound):
    workspace readiness never covers storage.
    """
    from tau.connection import READINESS, LayerFailure
    from tau.workspace.inspect import check_pvc, get_workspace, workspace_status

    kube = _kube(context)
    data = workspace_status(get_workspace(kube, name, system_namespace))
    pvc = None
    if data_pvc and data["resolved"]["namespace"]:
        pvc = check_pvc(kube, data_pvc, data["resolved"]["namespace"])
        data["pvc"] = {"name": pvc.name, "namespace": pvc.namespace, "state": pvc.state}

    def table() -> None:
        verdict = "Ready" if data["ready"] else data["problem"]
        typer.echo(f"workspace {name}: {verdict}")
        if pvc is not None:
            typer.echo(f"pvc {pvc.namespace}/{pvc.name}: {pvc.state}")

    emit(data, output, table=table)
    if pvc is not None and not pvc.ok:
        _say(
            f"warning: PVC {pvc.namespace}/{pvc.name} is {pvc.state}, not Bound; Ready does not "
            "cover storage (owner: platform operator)"
        )
    if not data["ready"]:
        raise LayerFailure(
            READINESS,
            f'workspace "{name}" is not Ready (phase={data["phase"]})',
            hint=f"see `tau workspace status {name}`",
        )


# --- create / adopt --------------------------------------------------------------------------


def _preview_or_apply(
    kube: KubeClient,
    rendered: Rendered,
    again: Callable[[], Rendered],
    apply_: bool,
    output: Output,
) -> None:
    from tau.workspace import authoring

    for notice in rendered.notices:
        _say(f"notice: {notice}")
    if not apply_:
        if output is not Output.json:
            for line in rendered.summary:
                typer.echo(f"# {line}")
            typer.echo("# preview only: rerun with --apply to create it")
            sys.stdout.write(dump_yaml(rendered.obj))
        else:
            emit(rendered.obj, output)
        return
    outcome = authoring.apply(kube, rendered, again())
    name = rendered.obj["metadata"]["name"]
    typer.echo(f"TauWorkspace {rendered.obj['metadata']['namespace']}/{name} {outcome}")
    typer.echo(f"Next: tau workspace check {name}")


@app.command("create")
def create(
    name: str = typer.Argument(keys.DEFAULT_WORKSPACE, help="Workspace name."),
    principal_name: str = typer.Option(
        None, "--principal-name", help="External group/user/team the researcher role binds."
    ),
    principal_provider: str = typer.Option("entra", "--principal-provider", help="entra|github."),
    subject_kind: str = typer.Option(
        "Group", "--subject-kind", help="Group, User or ServiceAccount."
    ),
    subject_name: str = typer.Option("", "--subject-name", help="Default: the principal name."),
    namespace: str = typer.Option("", "--namespace", help="Workload namespace (default NAME)."),
    queue: str = typer.Option(keys.DEFAULT_QUEUE, "--queue", help="LocalQueue (jobqueue in v0)."),
    output_root: str = typer.Option("", "--output-root", help="Default /data/projects/NAME/runs."),
    priority: str = typer.Option("normal", "--priority", help="normal, default or priority."),
    service_account: str = typer.Option("", "--service-account", help="Workload identity SA."),
    client_id: str = typer.Option(
        "", "--workload-identity-client-id", help="Managed identity client ID for the SA."
    ),
    system_namespace: str = system_namespace_option(),
    context: str = context_option(),
    apply_: bool = typer.Option(False, "--apply", help="Create it (default: preview only)."),
    output: Output = output_option(Output.yaml),
) -> None:
    """Render the v0 researcher TauWorkspace (workspace-rbac); preview, or --apply to create."""
    from tau.workspace import authoring

    def render() -> authoring.Rendered:
        return authoring.render_create(
            name,
            system_namespace=system_namespace,
            namespace=namespace,
            queue=queue,
            principal_provider=principal_provider,
            principal_name=principal_name,
            subject_kind=subject_kind,
            subject_name=subject_name,
            output_root=output_root,
            priority=priority,
            service_account=service_account,
            workload_identity_client_id=client_id,
        )

    kube = _kube(context)
    rendered = authoring.preflight_create(kube, render())
    _preview_or_apply(
        kube, rendered, lambda: authoring.preflight_create(kube, render()), apply_, output
    )


@app.command("adopt")
def adopt(
    name: str = typer.Argument(..., help="Workspace name."),
    namespace: str = typer.Option("", "-n", "--namespace", help="Existing namespace (NAME)."),
    queue: str = typer.Option(keys.DEFAULT_QUEUE, "--queue", help="Existing LocalQueue in it."),
    data_pvc: str = typer.Option(keys.DEFAULT_PVC, "--data-pvc", help="PVC to check ('' skips)."),
    storage_class: str = typer.Option("", "--storage-class", help="Expected PVC StorageClass."),
    cluster_queue: str = typer.Option("", "--cluster-queue", help="Expected backing queue."),
    namespace_uid: str = typer.Option("", "--namespace-uid", help="Guard: Namespace UID."),
    queue_uid: str = typer.Option("", "--queue-uid", help="Guard: LocalQueue UID."),
    pvc_uid: str = typer.Option("", "--pvc-uid", help="Guard: PVC UID."),
    output_root: str = typer.Option("", "--output-root", help="Default /data/projects/NAME/runs."),
    priority: str = typer.Option("normal", "--priority", help="normal, default or priority."),
    system_namespace: str = system_namespace_option(),
    context: str = context_option(),
    apply_: bool = typer.Option(False, "--apply", help="Create it (default: preview only)."),
    output: Output = output_option(Output.yaml),
) -> None:
    """Hand off an existing namespace + LocalQueue as a cluster-wide TauWorkspace."""
    from tau.workspace import authoring

    guards = authoring.AdoptGuards(
        data_pvc=data_pvc,
        namespace_uid=namespace_uid,
        queue_uid=queue_uid,
        pvc_uid=pvc_uid,
        storage_class=storage_class,
        cluster_queue=cluster_queue,
    )

    def render() -> authoring.Rendered:
        return authoring.render_adopt(
            name,
            system_namespace=system_namespace,
            namespace=namespace,
            queue=queue,
            output_root=output_root,
            priority=priority,
        )

    kube = _kube(context)
    rendered = authoring.preflight_adopt(kube, render(), guards)
    _preview_or_apply(
        kube, rendered, lambda: authoring.preflight_adopt(kube, render(), guards), apply_, output
    )


# --- quota -----------------------------------------------------------------------------------


@quota_app.command("show")
def quota_show(
    workspace: str = typer.Argument(..., help="TauWorkspace name."),
    system_namespace: str = system_namespace_option(),
    context: str = context_option(),
    output: Output = output_option(),
) -> None:
    """The workspace queue's nominal quota and usage, and its quota requests.

    Without --context, a workspace connected on this machine is reached through its own
    kubeconfig and system namespace, as `tau run` reaches it."""
    from tau.connection import cached_route
    from tau.kube import KubeClient
    from tau.workspace.authoring import quota_view
    from tau.workspace.inspect import get_workspace

    cached = None if context else cached_route(workspace)
    if cached is not None:
        kube = KubeClient(cached.kubeconfig, cached.context)
        if system_namespace == DEFAULT_SYSTEM_NAMESPACE and cached.system_namespace:
            system_namespace = cached.system_namespace
    else:
        kube = _kube(context)
    data = quota_view(kube, get_workspace(kube, workspace, system_namespace))

    def table() -> None:
        typer.echo(f"ClusterQueue: {data['clusterQueue']}")
        columns = ("flavor", "resource", "nominal", "used")
        print_records(columns, data["quota"])
        if data["requests"]:
            columns = ("name", "resource", "requested", "phase")
            print_records(columns, data["requests"])

    emit(data, output, table=table)


@quota_app.command("request")
def quota_request(
    workspace: str = typer.Argument(..., help="TauWorkspace name."),
    resource: str = typer.Option("", "--resource", help="Resource, e.g. nvidia.com/gpu."),
    requested: int = typer.Option(0, "--requested", help="Amount requested (> 0)."),
    reason: str = typer.Option("", "--reason", help="Why (the platform reviews it)."),
    mutation_mode: str = typer.Option(
        "ReportOnly", "--mutation-mode", help="ReportOnly: approval is reported, GitOps applies."
    ),
    system_namespace: str = system_namespace_option(),
    context: str = context_option(),
    apply_: bool = typer.Option(False, "--apply", help="Submit it (default: preview only)."),
    output: Output = output_option(Output.yaml),
) -> None:
    """Render a TauQuotaRequest; preview, or --apply to submit it for platform review."""
    from tau.workspace.authoring import render_quota_request, submit_quota_request

    obj = render_quota_request(
        workspace,
        system_namespace=system_namespace,
        resource=resource,
        requested=requested,
        reason=reason,
        mutation_mode=mutation_mode,
    )
    if not apply_:
        emit(obj, output)
        return
    submit_quota_request(_kube(context), obj)
    typer.echo(f"TauQuotaRequest {system_namespace}/{obj['metadata']['name']} submitted")


# --- init-repo -------------------------------------------------------------------------------


@app.command("init-repo")
def init_repo(
    name: str = typer.Argument(..., help="Repository (project) name."),
    image: str = typer.Option("", "--image", help="Project image (required)."),
    output_dir: str = typer.Option("", "--output", help="Target directory (default ./NAME)."),
    python_version: str = typer.Option("3.12", "--python-version"),
    package: str = typer.Option("", "--package", help="Python package (default from NAME)."),
    workspace: str = typer.Option("", "--workspace", help="TauWorkspace for the descriptor."),
    kube_context: str = typer.Option("", "--kube-context", help="Kube context for the descriptor."),
    system_namespace: str = typer.Option("", "--system-namespace", help="If not tau-system."),
    subscription: str = typer.Option("", "--azure-subscription-id"),
    tenant: str = typer.Option("", "--azure-tenant-id"),
    resource_group: str = typer.Option("", "--aks-resource-group"),
    cluster: str = typer.Option("", "--aks-cluster"),
    smoke_command: str = typer.Option("", "--smoke-command"),
    train_command: str = typer.Option("", "--train-command"),
    force: bool = typer.Option(False, "--force", help="Overwrite existing files."),
) -> None:
    """Scaffold a TauGrid-ready research repository (targets, code, optional descriptor)."""
    from tau.workspace.scaffold import AksCluster, ScaffoldRequest, scaffold

    quartet = (subscription, tenant, resource_group, cluster)
    if any(quartet) and not all(quartet):
        raise UsageError(
            "--azure-subscription-id, --azure-tenant-id, --aks-resource-group and --aks-cluster "
            "go together (all or none)"
        )
    request = ScaffoldRequest(
        name=name,
        output=Path(output_dir or name),
        image=image,
        python_version=python_version,
        package=package,
        workspace=workspace,
        kube_context=kube_context,
        system_namespace=system_namespace,
        aks=AksCluster(*quartet) if all(quartet) else None,
        smoke_command=smoke_command,
        train_command=train_command,
        force=force,
    )
    written = scaffold(request)
    typer.echo(f"Scaffolded {len(written)} files in {request.output}.")
    if any(path.name == "workspace.connection.yaml" for path in written):
        typer.echo("Next: git init, then `tau workspace connection` to verify the workspace.")
    else:
        typer.echo("No descriptor written: pass --workspace and --kube-context (or AKS flags).")


# The Enable-a-workspace page spells it `tau workspace init`; one command, two names.
app.command("init", help="Alias of init-repo (the Enable-a-workspace page's spelling).")(init_repo)

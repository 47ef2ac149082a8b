"""Connected submission: workspace connection → Ready TauWorkspace → ready TauCluster profile
→ render → create.

There is no bypass: every submission re-reads the TauWorkspace (cached readiness evidence
only spares the connection review, never this check) and selects a workload profile from
the TauCluster fail-closed. Objects are created, never applied: an existing object of the
same name is reused only when it carries this submission's id.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from tau import keys
from tau.connection import (
    READINESS,
    DescriptorNotFound,
    LayerFailure,
    Target,
    active_workspace,
    connect,
    discover_connection,
    read_workspace,
    readiness_problem,
    terminal_interaction,
)
from tau.errors import RuntimeFailure, UsageError
from tau.jsontypes import JSONObject
from tau.kube import ConflictError, KubeClient, NotFoundError, UnavailableError
from tau.kube.deletion import delete
from tau.kube.resources import (
    JOBS,
    LOCAL_QUEUES,
    RAY_JOBS,
    SECRET_PROVIDER_CLASSES,
    SERVICES,
    Resource,
)

if TYPE_CHECKING:
    from tau.render.intent import RunIntent
    from tau.render.workflow import WorkflowIntent
    from tau.resolve.direct import Resolution
    from tau.resolve.layers import DescriptorLayer, Overrides, WorkspaceLayer
    from tau.resolve.workflow import WorkflowResolution
    from tau.runconfig.loader import LoadedConfig

    AnyResolution = TypeVar("AnyResolution", Resolution, WorkflowResolution)

PLATFORM = "platform operator (TauWorkspace)"
KINDS: dict[str, Resource] = {
    "Job": JOBS,
    "RayJob": RAY_JOBS,
    "Service": SERVICES,
    "SecretProviderClass": SECRET_PROVIDER_CLASSES,
}


@dataclass
class Prepared:
    """Everything needed to (re)submit one run: retries re-render from here."""

    loaded: LoadedConfig
    resolution: Resolution | WorkflowResolution
    kube: KubeClient
    target: Target
    system_namespace: str

    @property
    def intent(self) -> RunIntent | WorkflowIntent:
        return self.resolution.intent

    @property
    def name(self) -> str:
        return self.intent.name

    @property
    def namespace(self) -> str:
        return self.intent.namespace

    @property
    def env(self) -> tuple[tuple[str, str], ...]:
        """The plain env as (name, value) pairs, which retries and resume rewrite. A managed
        workflow's secret-backed entries are not pairs: `_reattempt` keeps them as they were."""
        from tau.render.workflow import WorkflowIntent

        intent = self.intent
        if isinstance(intent, WorkflowIntent):
            return tuple(
                (e.name, e.value) for e in intent.env if e.secret is None and e.value is not None
            )
        return intent.env


@dataclass
class Submitted:
    name: str
    namespace: str
    kind: str
    submission_id: str
    reused: bool = False
    results: bool = False
    # The API server's Warning headers at creation (PodSecurity's, deprecations), in order.
    warnings: tuple[str, ...] = ()
    # (directory, PVC) of a profiled run's reports, from its profile-* annotations.
    profile: tuple[str, str] | None = None


def new_submission_id() -> str:
    """24 lowercase hex (12 random bytes), the submission-id format upstream writes; metrics
    session and artifact publication ids share it."""
    return secrets.token_hex(12)


def workspace_layer(obj: JSONObject) -> WorkspaceLayer:
    """The TauWorkspace's published defaults as a resolution layer."""
    from tau.resolve.layers import WorkspaceLayer

    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    meta = obj.get("metadata") or {}
    defaults = spec.get("defaults") or {}
    identity = spec.get("workloadIdentity") or {}
    namespace = (
        (status.get("target") or {}).get("resolvedNamespace")
        or (spec.get("target") or {}).get("namespace")
        or meta.get("name")
    )
    return WorkspaceLayer(
        name=meta.get("name", ""),
        namespace=namespace,
        queue=(status.get("queue") or {}).get("localQueue") or spec.get("queue"),
        priority_tier=defaults.get("priority"),
        output_root=defaults.get("outputRoot"),
        service_account=identity.get("serviceAccountName"),
        workload_identity=bool(identity),
        retention_seconds=defaults.get("ttlSecondsAfterFinished"),
        workspace_id=meta.get("uid"),
        pod_security=(status.get("target") or {}).get("podSecurity"),
    )


@dataclass
class _Connected:
    kube: KubeClient
    target: Target
    descriptor: DescriptorLayer | None
    workspace: str
    system_namespace: str
    # The TauWorkspace connection verification read moments ago on this same context, if it
    # ran (stale readiness evidence): the submission's own read would only repeat it.
    verified: JSONObject | None = None


def _connect(
    loaded: LoadedConfig, overrides: Overrides, project: str, system_namespace: str
) -> _Connected:
    """Without a descriptor, `--context` alone is enough: the cluster's primary workspace (the
    controller's marker, else its only workspace) is the one the platform guide's smoke run
    uses, unless --workspace or policy.workspace names another.
    """
    from tau.resolve.layers import DescriptorLayer

    try:
        source = discover_connection(loaded.base_dir, project=project)
    except DescriptorNotFound:
        source = None
    policy = getattr(loaded.config, "policy", None)
    workspace = overrides.workspace or (getattr(policy, "workspace", None) or "")
    if source is None:
        if not overrides.context:
            raise UsageError(
                "submission needs a workspace connection: no tau/workspace.connection.yaml or "
                "local assignment was found",
                hint="run `tau workspace connection assign WORKSPACE --context CTX`, or pass "
                "--context (the cluster's primary workspace is used unless --workspace names one)",
                owner="researcher: repository connection",
            )
        kube = KubeClient(None, overrides.context)
        if not workspace:
            workspace = active_workspace(kube, system_namespace, choose_with="--workspace")
        target = Target(None, overrides.context, "", workspace, "--context")
        return _Connected(kube, target, None, workspace, "")
    conn = connect(source, terminal_interaction(), use_cache=True)
    descriptor = source.descriptor
    layer = DescriptorLayer(source.shown, descriptor.workspace, descriptor.context_name)
    context = overrides.context or conn.context
    kubeconfig = str(conn.kubeconfig) if context == conn.context else None
    kube = KubeClient(kubeconfig, context)
    target = Target(kubeconfig, context, "", descriptor.workspace, "connection")
    workspace = workspace or descriptor.workspace
    verified = None
    if conn.live is not None and context == conn.context and workspace == conn.live.name:
        verified = conn.live.obj
    return _Connected(kube, target, layer, workspace, descriptor.system_namespace, verified)


def prepare(
    loaded: LoadedConfig,
    overrides: Overrides,
    *,
    project: str = "",
    argv: tuple[str, ...] = (),
    system_namespace: str = "tau-system",
    say: Callable[[str], None] = lambda _: None,
) -> Prepared:
    import os

    from tau.profiles.live import read_profile_set
    from tau.resolve.direct import resolve_run
    from tau.resolve.layers import ConfigLayer
    from tau.resolve.profile import profile_layer
    from tau.resolve.request import git_head, refuse_key_vault_flags
    from tau.runconfig.managed import ManagedManifest

    config = loaded.config
    # A direct run config; None for a managed workflow (an SDK manifest or `workflow.file`).
    direct = None if isinstance(config, ManagedManifest) or config.is_managed_dispatch else config
    if direct is not None:
        refuse_key_vault_flags(overrides)
    connected = _connect(loaded, overrides, project, system_namespace)
    kube, target, descriptor = connected.kube, connected.target, connected.descriptor
    workspace = connected.workspace
    system = connected.system_namespace or system_namespace
    obj = connected.verified or read_workspace(kube, workspace, system)
    problem = readiness_problem(obj)
    if problem:
        raise LayerFailure(
            READINESS,
            problem,
            hint=f"see `tau workspace status {workspace}`; resubmitting cannot fix this",
        )
    ws = workspace_layer(obj)
    if direct is None:
        return _prepare_workflow(
            loaded, overrides, kube, target, descriptor, ws, system, argv=argv, say=say
        )
    policy = direct.policy
    namespace = overrides.namespace or (policy.namespace if policy else None) or ws.namespace
    selection = read_profile_set(kube).select(
        policy.profile if policy else None,
        namespace=namespace,
        team=policy.team if policy else None,
        lane=policy.lane if policy else None,
    )
    resolution = resolve_run(
        ConfigLayer(loaded),
        overrides=overrides,
        descriptor=descriptor,
        workspace=ws,
        profile=profile_layer(selection),
        env=os.environ,
        code_sha=git_head(loaded.base_dir),
        argv=argv,
        submission_id=None if overrides.dry_run else new_submission_id(),
    )
    resolution = _bind_datasets(resolution, kube, overrides.dry_run)
    for warning in resolution.warnings:
        say(f"warning: {warning}")
    intent = resolution.intent
    _check_local_queue(kube, intent.placement.queue, intent.namespace)
    target = replace(target, namespace=intent.namespace)
    return Prepared(loaded, resolution, kube, target, system)


def _bind_datasets(resolution: AnyResolution, kube: KubeClient, dry_run: str) -> AnyResolution:
    """Pin `dataset:` env references on the run's data PVC (read by a helper pod)."""
    from tau.data import binding

    if dry_run == "client":
        warning = binding.unbound_warning(resolution.intent)
        return (
            replace(resolution, warnings=[*resolution.warnings, warning]) if warning else resolution
        )
    from tau.data import datasets
    from tau.data.connect import pvc_root

    intent = binding.bind(
        resolution.intent,
        lambda claim: pvc_root(kube, resolution.intent.namespace, claim, datasets.SCOPE),
    )
    return replace(resolution, intent=intent)


def _prepare_workflow(
    loaded: LoadedConfig,
    overrides: Overrides,
    kube: KubeClient,
    target: Target,
    descriptor: DescriptorLayer | None,
    ws: WorkspaceLayer,
    system: str,
    *,
    argv: tuple[str, ...],
    say: Callable[[str], None],
) -> Prepared:
    """A managed workflow: the manifest's shape, the workspace's namespace, queue, identity."""
    from tau.resolve.request import git_head
    from tau.resolve.workflow import resolve_workflow

    resolution = resolve_workflow(
        loaded,
        overrides=overrides,
        descriptor=descriptor,
        workspace=ws,
        code_sha=git_head(loaded.base_dir),
        argv=argv,
        submission_id=None if overrides.dry_run else new_submission_id(),
    )
    resolution = _bind_datasets(resolution, kube, overrides.dry_run)
    for warning in resolution.warnings:
        say(f"warning: {warning}")
    intent = resolution.intent
    _check_local_queue(kube, intent.queue, intent.namespace)
    if intent.key_vault is not None and overrides.dry_run != "client":
        _check_secrets_store(kube, intent.namespace)
    return Prepared(loaded, resolution, kube, replace(target, namespace=intent.namespace), system)


def _check_secrets_store(kube: KubeClient, namespace: str) -> None:
    try:
        kube.list(SECRET_PROVIDER_CLASSES, namespace)
    except NotFoundError as error:
        if not error.resource_missing:
            raise
        raise LayerFailure(
            READINESS,
            "runtime.env_kv needs the Secrets Store CSI driver, but this cluster has no "
            "SecretProviderClass API (secretproviderclasses.secrets-store.csi.x-k8s.io)",
            hint="install the Secrets Store CSI driver with its Azure provider",
        ) from None


def _check_local_queue(kube: KubeClient, queue: str, namespace: str) -> None:
    """Read even for the workspace's own queue: a Ready TauWorkspace does not prove its
    LocalQueue still exists (deleted since the last reconcile), and Kueue would never admit a
    workload whose queue is gone."""
    try:
        kube.get(LOCAL_QUEUES, queue, namespace)
    except NotFoundError as error:
        if error.resource_missing:
            raise LayerFailure(
                READINESS,
                "Kueue is not installed on this cluster (no localqueues.kueue.x-k8s.io)",
                hint="install TauGrid with `tau cluster install`",
            ) from None
        raise LayerFailure(
            READINESS,
            f'LocalQueue "{queue}" does not exist in namespace "{namespace}"; Kueue would '
            "never admit the workload",
            hint="the platform restores the workspace LocalQueue (see `tau workspace status`)",
        ) from None


def with_attempt(prepared: Prepared, env: tuple[tuple[str, str], ...]) -> Prepared:
    """The same run with new env and a fresh submission id (retries and resume)."""
    from tau.resolve.direct import Resolution

    resolution, submission_id = prepared.resolution, new_submission_id()
    if isinstance(resolution, Resolution):
        return replace(prepared, resolution=_reattempt(resolution, env, submission_id))
    return replace(prepared, resolution=_reattempt(resolution, env, submission_id))


def _reattempt(
    resolution: AnyResolution, env: tuple[tuple[str, str], ...], submission_id: str
) -> AnyResolution:
    from tau.render.workflow import EnvVar, WorkflowIntent

    intent = resolution.intent
    provenance = replace(intent.provenance, submission_id=submission_id)
    if isinstance(intent, WorkflowIntent):
        # The pairs replace the plain entries; secret-backed ones stay unless a pair names them.
        named = {name for name, _ in env}
        kept = tuple(e for e in intent.env if e.name not in named and e.secret is not None)
        entries = tuple(EnvVar(name, value) for name, value in env) + kept
        return replace(resolution, intent=replace(intent, env=entries, provenance=provenance))
    return replace(resolution, intent=replace(intent, env=env, provenance=provenance))


def render_objects(prepared: Prepared) -> list[JSONObject]:
    """Rendered objects in creation order: the workload first, then what it owns."""
    from tau.render import render

    objects = render(prepared.intent)
    return sorted(objects, key=lambda obj: obj["kind"] not in ("Job", "RayJob"))


def server_dry_run(prepared: Prepared, warnings: list[str] | None = None) -> list[JSONObject]:
    """Send every rendered object with dryRun=All; returns them as the API server (and its
    admission webhooks) would have stored them, its Warning headers appended to `warnings`."""
    return [
        _dry_run(prepared.kube, obj, prepared.namespace, warnings)
        for obj in render_objects(prepared)
    ]


def submit(prepared: Prepared) -> Submitted:
    objects = render_objects(prepared)
    kube, namespace = prepared.kube, prepared.namespace
    workload, owned = objects[0], objects[1:]
    resource = KINDS[workload["kind"]]
    name = workload["metadata"]["name"]
    submission = prepared.intent.provenance.submission_id or ""
    warnings: list[str] = []
    created, reused = _create(kube, resource, workload, namespace, submission, warnings)
    owner = {
        "apiVersion": created["apiVersion"],
        "kind": created["kind"],
        "name": name,
        "uid": created["metadata"]["uid"],
    }
    try:
        for obj in owned:
            obj = {**obj, "metadata": {**obj["metadata"], "ownerReferences": [owner]}}
            try:
                kube.create(KINDS[obj["kind"]], obj, namespace, warnings=warnings)
            except ConflictError:
                if not reused:
                    raise
    except RuntimeFailure as error:
        if not reused:
            delete(kube, resource, name, namespace)
        raise RuntimeFailure(
            f"creating the objects owned by {workload['kind']} {namespace}/{name} failed; "
            f"the {workload['kind']} was rolled back: {error.one_line()}",
            owner=error.owner,
        ) from None
    annotations = workload["metadata"].get("annotations") or {}
    results = bool(annotations.get(keys.RESULT_PATH) and annotations.get(keys.RESULT_PVC))
    path, pvc = annotations.get(keys.PROFILER_PATH), annotations.get(keys.PROFILER_PVC)
    return Submitted(
        name,
        namespace,
        workload["kind"],
        submission,
        reused,
        results,
        tuple(warnings),
        (path, pvc) if path and pvc else None,
    )


def _dry_run(
    kube: KubeClient, obj: JSONObject, namespace: str, warnings: list[str] | None
) -> JSONObject:
    name = obj["metadata"]["name"]
    try:
        return kube.create(KINDS[obj["kind"]], obj, namespace, dry_run=True, warnings=warnings)
    except ConflictError:
        raise RuntimeFailure(
            f'{obj["kind"]} "{name}" already exists in namespace "{namespace}"; a new '
            "submission with this name would collide",
            hint=f"inspect it with `tau run status {name} -n {namespace}`, then cancel or resume "
            "it, or choose a new name",
            owner="researcher: run name",
        ) from None


def _create(
    kube: KubeClient,
    resource: Resource,
    obj: JSONObject,
    namespace: str,
    submission: str,
    warnings: list[str],
) -> tuple[JSONObject, bool]:
    """Create; an existing object is ours only if it carries this submission id."""
    name = obj["metadata"]["name"]
    try:
        return kube.create(resource, obj, namespace, warnings=warnings), False
    except (ConflictError, UnavailableError) as error:
        existing = kube.get_or_none(resource, name, namespace)
        if existing is None:
            raise
        found = ((existing.get("metadata") or {}).get("annotations") or {}).get(
            keys.SUBMISSION_ID, ""
        )
        if found and found == submission:
            return existing, True
        if isinstance(error, UnavailableError):
            raise
        raise RuntimeFailure(
            f'{resource.kind} "{name}" already exists in namespace "{namespace}" from another '
            "submission and will not be reused",
            hint=f"choose a new name, or cancel the old run with `tau run cancel {name} "
            f"-n {namespace}`",
            owner="researcher: run name",
        ) from None


def next_steps(submitted: Submitted, target: Target) -> list[str]:
    """What to run next; `tau run get` only when the run records a result location, since
    without one it can only refuse."""
    route = " ".join(target.route_args())
    name = submitted.name
    steps = [f"tau run status {name} --watch {route}", f"tau logs {name} {route}"]
    if submitted.results:
        steps.append(f"tau run get {name} {route}")
    return [*steps, f"tau run cancel {name} {route}"]


def profile_note(submitted: Submitted) -> str | None:
    """Where a profiled run's reports land, so the researcher knows what to fetch from which
    PVC once it ends (the reports outlive the pod only there)."""
    if submitted.profile is None:
        return None
    path, pvc = submitted.profile
    return f"profile artifacts: stored under {path} on PVC {pvc}"

"""Live verification of a workspace connection, one named layer at a time.

A failed connection is useless unless the researcher knows whom to ask. Each check below
fails with the layer it belongs to and the owner of the fix:

    descriptor           the checked-in file            (platform operator who authored it)
    access               kubeconfig / sign-in / network (you, or your platform for the network)
    workspace readiness  TauWorkspace status, LocalQueue (platform operator)
    authorization        mode/role contract, RBAC verbs  (platform operator)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tau.api.connection import WorkspaceConnection
from tau.api.workspace import CLUSTER_WIDE, WORKSPACE_RBAC
from tau.errors import RuntimeFailure, UsageError
from tau.jsontypes import JSONObject
from tau.keys import PRIMARY_WORKSPACE
from tau.kube import AuthorizationError, KubeClient, KubeError, NotFoundError
from tau.kube.resources import LOCAL_QUEUES, TAU_WORKSPACES

PLATFORM = "platform operator"
READINESS = "workspace readiness"
AUTHORIZATION = "authorization"
NOT_TAUGRID = "this context does not look like a TauGrid cluster"

# What a researcher must be able to do in the workspace namespace (workspace-rbac mode):
# (verb, resource, API group, subresource).
RESEARCHER_VERBS: tuple[tuple[str, str, str, str], ...] = (
    *((verb, "jobs", "batch", "") for verb in ("create", "get", "list", "patch", "delete")),
    *((verb, "rayjobs", "ray.io", "") for verb in ("create", "get", "list", "patch", "delete")),
    ("get", "pods", "", ""),
    ("list", "pods", "", ""),
    ("get", "pods", "", "log"),
    ("get", "localqueues", "kueue.x-k8s.io", ""),
    ("get", "workloads", "kueue.x-k8s.io", ""),
    ("list", "workloads", "kueue.x-k8s.io", ""),
)


class LayerFailure(RuntimeFailure):
    """A verification failure; `layer` is one of the four names in the module docstring."""

    def __init__(self, layer: str, message: str, *, hint: str = "", owner: str = PLATFORM):
        super().__init__(f"{layer}: {message}", hint=hint, owner=owner)
        self.layer = layer


@dataclass(frozen=True)
class LiveWorkspace:
    """The contract a Ready TauWorkspace offers: where workloads go and under which rules."""

    name: str
    uid: str
    namespace: str
    queue: str
    cluster_queue: str
    service_account: str
    authorization_mode: str
    role: str
    phase: str
    # The TauWorkspace as verification read it: a submission right after verification
    # reuses it instead of reading it again.
    obj: JSONObject = field(default_factory=dict, compare=False, repr=False)


def read_workspace(kube: KubeClient, name: str, system_namespace: str) -> JSONObject:
    """GET the TauWorkspace, turning "no such type" into "not a TauGrid cluster"."""
    try:
        return kube.get(TAU_WORKSPACES, name, system_namespace)
    except NotFoundError as error:
        if error.resource_missing:
            raise LayerFailure(
                READINESS,
                f"this context does not look like a TauGrid cluster ({kube.target} serves no "
                "workspaces.tau.azure.com)",
                hint="check the context, or install TauGrid with `tau cluster install`",
            ) from None
        raise LayerFailure(
            READINESS,
            f'TauWorkspace "{name}" does not exist in namespace "{system_namespace}"',
            hint="ask the platform to create it (`tau workspace create`) or fix "
            "`workspace`/`cluster.systemNamespace` in the descriptor",
        ) from None
    except AuthorizationError as error:
        raise denied_workspace(kube, name, system_namespace, error) from None


def denied_workspace(
    kube: KubeClient, name: str, system_namespace: str, error: AuthorizationError
) -> LayerFailure:
    """A denied GET of a TauWorkspace, told apart: a name this identity holds no grant for
    (a typo, or a workspace that does not exist) vs. no workspace access at all.

    The controller grants `get` per workspace name, so the API server answers 403 — never
    404 — for a workspace that does not exist; the caller's own rules say which names exist
    for it.
    """
    from tau.runconfig.suggest import nearest

    try:
        names = kube.readable_names(TAU_WORKSPACES, system_namespace)
    except KubeError:
        names = ()
    if names:
        guess = nearest(name, names)
        return LayerFailure(
            READINESS,
            f'no TauWorkspace "{name}" in namespace "{system_namespace}" for this identity '
            f"(it can read: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''})"
            + (f'; did you mean "{guess}"?' if guess else ""),
            hint="fix `workspace` in tau/workspace.connection.yaml or the WORKSPACE argument, "
            "or ask the platform operator to create the workspace",
            owner="researcher (workspace name) or platform operator (a missing workspace)",
        )
    return LayerFailure(
        AUTHORIZATION,
        f'you may not read TauWorkspace "{name}" in namespace "{system_namespace}" '
        f"({error.message.split('forbidden', 1)[-1].strip(' ():')})",
        hint="the workspace reader binding is created by the controller for the workspace "
        "subject; ask the platform to add you to it",
    )


def readiness_problem(obj: JSONObject) -> str:
    """Why a TauWorkspace object is not Ready at its current generation ("" when it is)."""
    status = obj.get("status") or {}
    phase = status.get("phase") or "Pending"
    generation = int((obj.get("metadata") or {}).get("generation") or 0)
    observed = status.get("observedGeneration")
    name = (obj.get("metadata") or {}).get("name", "")
    if phase != "Ready":
        failing = [
            f"{c.get('type')}={c.get('status')} {c.get('reason', '')}: {c.get('message', '')}"
            for c in status.get("conditions") or []
            if _blocks_ready(c)
        ]
        detail = f" ({'; '.join(failing)})" if failing else ""
        return f'TauWorkspace "{name}" is not Ready (phase={phase}){detail}'
    if generation <= 0 or observed != generation:
        return (
            f'TauWorkspace "{name}" status is stale (observedGeneration={observed}, '
            f"generation={generation}); the controller has not reconciled the current spec"
        )
    if not (status.get("target") or {}).get("resolvedNamespace"):
        return f'TauWorkspace "{name}" has no resolved target namespace'
    if not (status.get("queue") or {}).get("localQueue"):
        return f'TauWorkspace "{name}" has no resolved LocalQueue'
    return ""


def _blocks_ready(condition: JSONObject) -> bool:
    kind, value = condition.get("type"), condition.get("status")
    if kind == "DriftDetected":
        return value == "True"
    return kind in ("RBACReady", "QueueReady") and value != "True"


def live_contract(obj: JSONObject) -> LiveWorkspace:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    metadata = obj.get("metadata") or {}
    queue = status.get("queue") or {}
    return LiveWorkspace(
        name=metadata.get("name", ""),
        uid=metadata.get("uid", ""),
        namespace=(status.get("target") or {}).get("resolvedNamespace", ""),
        queue=queue.get("localQueue", ""),
        cluster_queue=queue.get("clusterQueue", ""),
        service_account=(spec.get("workloadIdentity") or {}).get("serviceAccountName") or "default",
        authorization_mode=(spec.get("authorization") or {}).get("mode") or WORKSPACE_RBAC,
        role=spec.get("role") or "",
        phase=status.get("phase") or "Pending",
        obj=obj,
    )


def verify_live(kube: KubeClient, descriptor: WorkspaceConnection) -> LiveWorkspace:
    """All live checks of `tau workspace connection`, in order; raises the first failure."""
    obj = read_workspace(kube, descriptor.workspace, descriptor.system_namespace)
    problem = readiness_problem(obj)
    if problem:
        raise LayerFailure(
            READINESS,
            problem,
            hint=f"see `tau workspace status {descriptor.workspace}` for the conditions",
        )
    live = live_contract(obj)
    check_authorization_contract(live, descriptor)
    try:
        kube.get(LOCAL_QUEUES, live.queue, live.namespace)
    except NotFoundError:
        raise LayerFailure(
            READINESS,
            f'LocalQueue "{live.queue}" does not exist in namespace "{live.namespace}"',
            hint="restore the workspace LocalQueue and its ClusterQueue",
        ) from None
    except AuthorizationError:
        raise LayerFailure(
            AUTHORIZATION,
            f'you may not get localqueues.kueue.x-k8s.io "{live.queue}" in namespace '
            f'"{live.namespace}"',
            hint=f"expected role {descriptor.authorization.requiredRole or 'cluster-wide access'}",
        ) from None
    check_permissions(kube, live, descriptor)
    return live


def check_authorization_contract(live: LiveWorkspace, descriptor: WorkspaceConnection) -> None:
    wanted = descriptor.authorization
    if live.authorization_mode != wanted.mode:
        raise LayerFailure(
            AUTHORIZATION,
            f'descriptor says authorization.mode "{wanted.mode}" but TauWorkspace '
            f'"{live.name}" uses "{live.authorization_mode}"',
            hint="the descriptor and the TauWorkspace must describe the same contract",
        )
    if wanted.mode == WORKSPACE_RBAC and live.role != wanted.requiredRole:
        raise LayerFailure(
            AUTHORIZATION,
            f'descriptor requires role "{wanted.requiredRole}" but TauWorkspace "{live.name}" '
            f'binds "{live.role or "<none>"}"',
        )


def check_permissions(
    kube: KubeClient, live: LiveWorkspace, descriptor: WorkspaceConnection
) -> None:
    """SelfSubjectAccessReviews for what `tau run` and the lifecycle verbs need."""
    if descriptor.authorization.mode == CLUSTER_WIDE:
        if not kube.can_i("*", "*", group="*").allowed:
            raise LayerFailure(
                AUTHORIZATION,
                "cluster-wide mode requires access to every resource in every namespace, "
                "and the API server denies it",
                hint="the platform grants researcher access separately in this mode",
            )
        return
    role = descriptor.authorization.requiredRole
    for verb, resource, group, subresource in RESEARCHER_VERBS:
        review = kube.can_i(
            verb, resource, group=group, namespace=live.namespace, subresource=subresource
        )
        if not review.allowed:
            shown = f"{resource}.{group}" if group else resource
            shown += f"/{subresource}" if subresource else ""
            raise LayerFailure(
                AUTHORIZATION,
                f'you may not {verb} {shown} in namespace "{live.namespace}"',
                hint=f"expected role {role} bound to you by TauWorkspace {live.name}",
            )


def not_taugrid(kube: KubeClient) -> LayerFailure:
    return LayerFailure(
        READINESS,
        f"{NOT_TAUGRID} ({kube.target} serves no workspaces.tau.azure.com)",
        hint="check --context, or install TauGrid with `tau cluster install`",
    )


def workspace_objects(kube: KubeClient, system_namespace: str) -> list[JSONObject]:
    try:
        items = kube.list(TAU_WORKSPACES, system_namespace)
    except NotFoundError as error:
        if error.resource_missing:
            raise not_taugrid(kube) from None
        raise
    return sorted(items, key=lambda item: item["metadata"]["name"])


def active_workspace(
    kube: KubeClient, system_namespace: str, choose_with: str = "WORKSPACE"
) -> str:
    """The one workspace annotated primary, else the only workspace (one list call)."""
    items = workspace_objects(kube, system_namespace)
    primary: list[str] = [
        obj["metadata"]["name"]
        for obj in items
        if (obj["metadata"].get("annotations") or {}).get(PRIMARY_WORKSPACE) == "true"
    ]
    if len(primary) == 1:
        return primary[0]
    if len(items) == 1:
        only: str = items[0]["metadata"]["name"]
        return only
    raise UsageError(
        f"cannot pick the active workspace in {system_namespace} ({len(items)} found); "
        f"pass {choose_with}"
    )

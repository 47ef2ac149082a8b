"""Operator verbs that write: `create`, `adopt` and `quota request`.

Each renders a typed object from `tau.api` (so the preview is exactly what the API server
receives), runs read-only preflight checks against the cluster, and writes only with
`--apply`: a server-side dry run first, then `create` (never an overwrite). v0 runs one
active workspace per cluster, so an existing workspace must have the same intent.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, TypeGuard, get_args

from pydantic import ValidationError as PydanticValidationError

from tau.api.connection import is_dns_subdomain, is_uuid
from tau.api.meta import DNS1123_LABEL, ObjectMeta, dump
from tau.api.quota import TauQuotaRequest, TauQuotaRequestSpec
from tau.api.workspace import (
    CLUSTER_WIDE,
    RESEARCHER_ROLE,
    WORKSPACE_RBAC,
    Authorization,
    KubernetesSubject,
    PrincipalProvider,
    PrincipalRef,
    SubjectKind,
    Target,
    TauWorkspace,
    TauWorkspaceSpec,
    WorkloadIdentity,
    WorkspaceDefaultsSpec,
)
from tau.errors import RuntimeFailure, UsageError, ValidationError
from tau.keys import (
    DEFAULT_PVC,
    DEFAULT_QUEUE,
    DEFAULT_WORKSPACE,
    KUEUE_DEFAULT_LOCAL_QUEUE,
    WORKSPACE,
)
from tau.kube import KubeClient
from tau.kube.resources import (
    CLUSTER_QUEUES,
    LOCAL_QUEUES,
    NAMESPACES,
    PERSISTENT_VOLUME_CLAIMS,
    STORAGE_CLASSES,
    TAU_QUOTA_REQUESTS,
    TAU_WORKSPACES,
)

OPERATOR = "platform operator"


def default_output_root(name: str) -> str:
    return f"/data/projects/{name}/runs"


@dataclass
class Rendered:
    """An object ready to preview or apply, plus what preflight learned."""

    obj: dict[str, Any]
    notices: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    existing: str = "absent"
    uids: dict[str, str] = field(default_factory=dict)


def _check_name(value: str, flag: str) -> None:
    if not is_dns_subdomain(value) or len(value) > 63:
        raise UsageError(f"{flag} {value!r} must be a DNS-1123 name of at most 63 characters")


def _check_label(value: str, flag: str) -> None:
    if len(value) > 63 or not re.fullmatch(DNS1123_LABEL, value):
        raise UsageError(f"{flag} {value!r} must be a DNS-1123 label")


def _is_provider(value: str) -> TypeGuard[PrincipalProvider]:
    return value in get_args(PrincipalProvider)


def _is_subject_kind(value: str) -> TypeGuard[SubjectKind]:
    return value in get_args(SubjectKind)


def _workspace(name: str, system_namespace: str, spec: TauWorkspaceSpec) -> dict[str, Any]:
    model = TauWorkspace(metadata=ObjectMeta(name=name, namespace=system_namespace), spec=spec)
    obj = dump(model)
    obj["metadata"] = {"name": name, "namespace": system_namespace}
    obj.pop("status", None)
    return obj


def _spec(**values: Any) -> TauWorkspaceSpec:
    try:
        return TauWorkspaceSpec(**values)
    except PydanticValidationError as error:
        problems = [
            f"{'.'.join(str(p) for p in item['loc']) or 'spec'}: {item['msg']}"
            for item in error.errors()
        ]
        raise ValidationError(
            "the rendered TauWorkspace is invalid", problems=problems, owner=OPERATOR
        ) from None


def render_create(
    name: str = DEFAULT_WORKSPACE,
    *,
    system_namespace: str,
    namespace: str = "",
    queue: str = DEFAULT_QUEUE,
    principal_provider: str = "entra",
    principal_name: str | None = None,
    subject_kind: str = "Group",
    subject_name: str = "",
    output_root: str = "",
    priority: str = "normal",
    service_account: str = "",
    workload_identity_client_id: str = "",
) -> Rendered:
    _check_name(name, "NAME")
    _check_label(system_namespace, "--system-namespace")
    namespace = namespace or name
    _check_label(namespace, "--namespace")
    if queue != DEFAULT_QUEUE:
        raise UsageError(f"--queue must be {DEFAULT_QUEUE} in v0 (got {queue!r})")
    if not _is_provider(principal_provider):
        raise UsageError("--principal-provider must be entra or github")
    if not _is_subject_kind(subject_kind):
        raise UsageError("--subject-kind must be Group, User or ServiceAccount")
    if bool(service_account) != bool(workload_identity_client_id):
        raise UsageError(
            "--service-account and --workload-identity-client-id go together (both or neither)"
        )
    if service_account:
        _check_name(service_account, "--service-account")
    notices: list[str] = []
    if principal_name is not None and not principal_name.strip():
        raise UsageError("--principal-name must not be empty")
    if principal_name is None:
        if principal_provider == "entra" and subject_kind == "Group" and not is_uuid(name):
            principal_name = name
            notices.append(
                f'--principal-name was not given: the researcher binding names group "{name}", '
                "which grants nobody unless your identity provider asserts it; rerun with "
                "--principal-name <group>, or later `kubectl edit workspaces.tau.azure.com "
                f"{name} -n {system_namespace}`"
            )
        else:
            raise UsageError(
                "--principal-name is required (the external group, user or team to bind)"
            )
    spec = _spec(
        authorization=Authorization(mode=WORKSPACE_RBAC),
        principal_ref=PrincipalRef(provider=principal_provider, name=principal_name),
        kubernetes_subject=KubernetesSubject(
            kind=subject_kind, name=subject_name or principal_name
        ),
        role=RESEARCHER_ROLE,
        target=Target(namespace=namespace, create_namespace=True),
        queue=queue,
        # model_validate: --priority is checked by the model, as any other field.
        defaults=WorkspaceDefaultsSpec.model_validate(
            {"output_root": output_root or default_output_root(name), "priority": priority}
        ),
        workload_identity=WorkloadIdentity(
            service_account_name=service_account, client_id=workload_identity_client_id
        )
        if service_account
        else None,
    )
    return Rendered(_workspace(name, system_namespace, spec), notices=notices)


def render_adopt(
    name: str,
    *,
    system_namespace: str,
    namespace: str = "",
    queue: str = DEFAULT_QUEUE,
    output_root: str = "",
    priority: str = "normal",
) -> Rendered:
    _check_name(name, "NAME")
    _check_label(system_namespace, "--system-namespace")
    namespace = namespace or name
    _check_label(namespace, "--namespace")
    output_root = output_root or default_output_root(name)
    if not output_root.startswith("/") or posixpath.normpath(output_root) != output_root:
        raise UsageError(f"--output-root {output_root!r} must be an absolute clean path")
    spec = _spec(
        authorization=Authorization(mode=CLUSTER_WIDE),
        target=Target(namespace=namespace, create_namespace=False),
        queue=queue,
        defaults=WorkspaceDefaultsSpec.model_validate(
            {"output_root": output_root, "priority": priority}
        ),
    )
    return Rendered(_workspace(name, system_namespace, spec))


def _intent(spec: dict[str, Any], name: str) -> dict[str, Any]:
    normalized = TauWorkspaceSpec.model_validate(spec).model_dump(by_alias=True, exclude_none=True)
    normalized["target"]["namespace"] = normalized["target"].get("namespace") or name
    return normalized


def _preflight_single_workspace(kube: KubeClient, rendered: Rendered) -> None:
    """v0: at most one workspace, and an existing one must carry the same intent."""
    name = rendered.obj["metadata"]["name"]
    system_namespace = rendered.obj["metadata"]["namespace"]
    existing = kube.list(TAU_WORKSPACES, system_namespace)
    if len(existing) > 1:
        names = ", ".join(sorted(item["metadata"]["name"] for item in existing))
        raise RuntimeFailure(
            f"preflight: {len(existing)} TauWorkspaces exist in {system_namespace} ({names}); "
            "v0 supports one active workspace",
            owner=OPERATOR,
        )
    if not existing:
        rendered.existing = "absent"
        return
    current = existing[0]
    metadata = current["metadata"]
    if metadata["name"] != name:
        raise RuntimeFailure(
            f'preflight: TauWorkspace "{metadata["name"]}" is already the active workspace in '
            f"{system_namespace}; v0 supports one active workspace",
            hint="remove it first, or create the same workspace",
            owner=OPERATOR,
        )
    if metadata.get("deletionTimestamp"):
        raise RuntimeFailure(f'preflight: TauWorkspace "{name}" is terminating', owner=OPERATOR)
    if _intent(current.get("spec") or {}, name) != _intent(rendered.obj["spec"], name):
        raise RuntimeFailure(
            f'preflight: TauWorkspace "{name}" exists with a different spec; refusing to '
            "overwrite it",
            hint=f"inspect it with `tau workspace status {name}`",
            owner=OPERATOR,
        )
    rendered.existing = "compatible"


def _cluster_queue(kube: KubeClient, name: str) -> dict[str, Any]:
    queue = kube.get_or_none(CLUSTER_QUEUES, name)
    if queue is None:
        raise RuntimeFailure(f'preflight: ClusterQueue "{name}" does not exist', owner=OPERATOR)
    if queue["metadata"].get("deletionTimestamp"):
        raise RuntimeFailure(f'preflight: ClusterQueue "{name}" is terminating', owner=OPERATOR)
    return queue


def preflight_create(kube: KubeClient, rendered: Rendered) -> Rendered:
    _preflight_single_workspace(kube, rendered)
    queue = rendered.obj["spec"]["queue"]
    rendered.uids["clusterqueue"] = _cluster_queue(kube, queue)["metadata"]["uid"]
    rendered.summary.append(
        f"preflight passed: ClusterQueue {queue} exists; TauWorkspace {rendered.existing}"
    )
    return rendered


@dataclass(frozen=True)
class AdoptGuards:
    data_pvc: str = DEFAULT_PVC
    namespace_uid: str = ""
    queue_uid: str = ""
    pvc_uid: str = ""
    storage_class: str = ""
    cluster_queue: str = ""


def _guard(kind: str, observed: str, expected: str) -> None:
    if expected and observed != expected:
        raise RuntimeFailure(
            f"preflight: {kind} UID is {observed}, expected {expected}", owner=OPERATOR
        )


def preflight_adopt(kube: KubeClient, rendered: Rendered, guards: AdoptGuards) -> Rendered:
    _preflight_single_workspace(kube, rendered)
    spec = rendered.obj["spec"]
    name = rendered.obj["metadata"]["name"]
    namespace, queue = spec["target"]["namespace"], spec["queue"]
    ns = kube.get_or_none(NAMESPACES, namespace)
    if ns is None:
        raise RuntimeFailure(
            f'preflight: Namespace "{namespace}" does not exist; adopt never creates it',
            owner=OPERATOR,
        )
    meta = ns["metadata"]
    _guard("Namespace", meta["uid"], guards.namespace_uid)
    if meta.get("deletionTimestamp"):
        raise RuntimeFailure(f'preflight: Namespace "{namespace}" is terminating', owner=OPERATOR)
    labels = meta.get("labels") or {}
    if labels.get(WORKSPACE, name) != name:
        raise RuntimeFailure(
            f'preflight: Namespace "{namespace}" belongs to workspace "{labels[WORKSPACE]}"',
            owner=OPERATOR,
        )
    if labels.get(KUEUE_DEFAULT_LOCAL_QUEUE, queue) != queue:
        raise RuntimeFailure(
            f'preflight: Namespace "{namespace}" default LocalQueue is '
            f'"{labels[KUEUE_DEFAULT_LOCAL_QUEUE]}", not "{queue}"',
            owner=OPERATOR,
        )
    local_queue = kube.get_or_none(LOCAL_QUEUES, queue, namespace)
    if local_queue is None:
        raise RuntimeFailure(
            f'preflight: LocalQueue "{namespace}/{queue}" does not exist; adopt never creates it',
            owner=OPERATOR,
        )
    _guard("LocalQueue", local_queue["metadata"]["uid"], guards.queue_uid)
    backing = (local_queue.get("spec") or {}).get("clusterQueue") or ""
    if not backing:
        raise RuntimeFailure(
            f'preflight: LocalQueue "{namespace}/{queue}" names no ClusterQueue', owner=OPERATOR
        )
    if guards.cluster_queue and backing != guards.cluster_queue:
        raise RuntimeFailure(
            f'preflight: LocalQueue "{namespace}/{queue}" points at ClusterQueue "{backing}", '
            f'not "{guards.cluster_queue}"',
            owner=OPERATOR,
        )
    cq = _cluster_queue(kube, backing)
    rendered.uids.update(
        namespace=meta["uid"],
        localqueue=local_queue["metadata"]["uid"],
        clusterqueue=cq["metadata"]["uid"],
    )
    line = f"preflight passed: Namespace {namespace}; LocalQueue {namespace}/{queue} -> "
    line += f"ClusterQueue {backing}"
    if guards.data_pvc:
        line += "; " + _preflight_pvc(kube, namespace, guards, rendered)
    rendered.summary.append(f"{line}; TauWorkspace {rendered.existing}")
    return rendered


def _preflight_pvc(
    kube: KubeClient, namespace: str, guards: AdoptGuards, rendered: Rendered
) -> str:
    pvc = kube.get_or_none(PERSISTENT_VOLUME_CLAIMS, guards.data_pvc, namespace)
    if pvc is None:
        raise RuntimeFailure(
            f'preflight: PVC "{namespace}/{guards.data_pvc}" does not exist '
            "(pass --data-pvc '' to skip storage checks)",
            owner=OPERATOR,
        )
    _guard("PVC", pvc["metadata"]["uid"], guards.pvc_uid)
    phase = (pvc.get("status") or {}).get("phase")
    if phase != "Bound":
        raise RuntimeFailure(
            f'preflight: PVC "{namespace}/{guards.data_pvc}" is {phase or "Pending"}, not Bound',
            owner=OPERATOR,
        )
    storage_class = (pvc.get("spec") or {}).get("storageClassName") or ""
    if not storage_class:
        raise RuntimeFailure(
            f'preflight: PVC "{namespace}/{guards.data_pvc}" has no storageClassName',
            owner=OPERATOR,
        )
    if guards.storage_class and storage_class != guards.storage_class:
        raise RuntimeFailure(
            f'preflight: PVC "{guards.data_pvc}" uses StorageClass "{storage_class}", '
            f'not "{guards.storage_class}"',
            owner=OPERATOR,
        )
    if kube.get_or_none(STORAGE_CLASSES, storage_class) is None:
        raise RuntimeFailure(
            f'preflight: StorageClass "{storage_class}" does not exist', owner=OPERATOR
        )
    rendered.uids["pvc"] = pvc["metadata"]["uid"]
    return f"PVC {guards.data_pvc} Bound (storageClass={storage_class})"


def apply(kube: KubeClient, rendered: Rendered, again: Rendered) -> str:
    """Create after a repeated preflight (`again`) saw the same UIDs; returns what happened."""
    for kind, uid in rendered.uids.items():
        if again.uids.get(kind) != uid:
            raise RuntimeFailure(
                f"preflight: {kind} changed between preview and apply; rerun", owner=OPERATOR
            )
    if again.existing == "compatible":
        return "unchanged (an identical TauWorkspace already exists)"
    namespace = rendered.obj["metadata"]["namespace"]
    kube.create(TAU_WORKSPACES, rendered.obj, namespace, dry_run=True)
    kube.create(TAU_WORKSPACES, rendered.obj, namespace)
    return "created"


def quota_request_name(workspace: str, resource: str) -> str:
    stem = re.sub(r"[^a-z0-9-]+", "-", f"{workspace}-{resource}".lower()).strip("-")
    return f"{stem}-quota-request"


def render_quota_request(
    workspace: str,
    *,
    system_namespace: str,
    resource: str,
    requested: int,
    reason: str,
    mutation_mode: str = "ReportOnly",
) -> dict[str, Any]:
    problems = []
    if not resource.strip():
        problems.append("--resource is required (e.g. nvidia.com/gpu)")
    if requested <= 0:
        problems.append("--requested must be greater than 0")
    if not reason.strip():
        problems.append("--reason is required")
    if mutation_mode != "ReportOnly":
        problems.append("--mutation-mode must be ReportOnly (quota changes go through GitOps)")
    if problems:
        raise UsageError("invalid quota request: " + "; ".join(problems))
    model = TauQuotaRequest(
        metadata=ObjectMeta(
            name=quota_request_name(workspace, resource), namespace=system_namespace
        ),
        spec=TauQuotaRequestSpec(
            workspace=workspace, resource=resource, requested=requested, reason=reason
        ),
    )
    obj = dump(model)
    obj["metadata"] = {"name": model.metadata.name, "namespace": system_namespace}
    obj.pop("status", None)
    return obj


def submit_quota_request(kube: KubeClient, obj: dict[str, Any]) -> dict[str, Any]:
    namespace = obj["metadata"]["namespace"]
    kube.create(TAU_QUOTA_REQUESTS, obj, namespace, dry_run=True)
    return kube.create(TAU_QUOTA_REQUESTS, obj, namespace)


def quota_view(kube: KubeClient, workspace: dict[str, Any]) -> dict[str, Any]:
    """The workspace queue's quota (ClusterQueue nominal and usage) and open requests."""
    live_queue = ((workspace.get("status") or {}).get("queue") or {}).get("clusterQueue") or (
        (workspace.get("spec") or {}).get("queue") or DEFAULT_QUEUE
    )
    name = workspace["metadata"]["name"]
    cq = kube.get_or_none(CLUSTER_QUEUES, live_queue)
    rows = []
    if cq is not None:
        usage: dict[tuple[str, str], str] = {}
        for flavor in (cq.get("status") or {}).get("flavorsUsage") or []:
            for resource in flavor.get("resources") or []:
                usage[(flavor["name"], resource["name"])] = str(resource.get("total", "0"))
        for group in (cq.get("spec") or {}).get("resourceGroups") or []:
            for flavor in group.get("flavors") or []:
                for resource in flavor.get("resources") or []:
                    key = (flavor["name"], resource["name"])
                    rows.append(
                        {
                            "flavor": key[0],
                            "resource": key[1],
                            "nominal": str(resource.get("nominalQuota", "")),
                            "used": usage.get(key, "0"),
                        }
                    )
    requests = [
        {
            "name": item["metadata"]["name"],
            "resource": item["spec"].get("resource", ""),
            "requested": item["spec"].get("requested", 0),
            "phase": (item.get("status") or {}).get("phase") or "PendingApproval",
        }
        for item in kube.list(TAU_QUOTA_REQUESTS, workspace["metadata"]["namespace"])
        if (item.get("spec") or {}).get("workspace") == name
    ]
    return {"workspace": name, "clusterQueue": live_queue, "quota": rows, "requests": requests}

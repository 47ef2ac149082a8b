"""TauWorkspace reconciler: namespace, researcher RBAC, LocalQueue, workload identity, and
the log connection `tau logs` discovers (ConfigMap `tau-log-connection`).

Only one workspace per cluster is active (the primary); additional ones are blocked and own
nothing. The controller never adopts or deletes an object it did not create: ownership is
the pair of labels `app.kubernetes.io/managed-by=tau-core-controller` and
`tau.azure.com/workspace=<name>`. The namespace itself is never deleted.

The module-level functions are pure decisions the unit tests call directly;
`WorkspaceReconciler` performs the reads and writes around them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from tau import keys
from tau.api.workspace import CLUSTER_WIDE, RESEARCHER_ROLE
from tau.controller import kubeapi as k
from tau.controller.conditions import (
    Condition,
    condition,
    merge_conditions,
    semantically_equal,
    workspace_phase,
)
from tau.kube.errors import KubeError
from tau.kube.resources import Resource
from tau.lifecycle.offload import LogOffload, publication

log = logging.getLogger(__name__)

REQUEUE_NOT_READY = 30.0
REQUEUE_READY = 300.0
LEGACY_SYSTEM_NAMESPACE = "tau-platform"
CLUSTERQUEUE_READER_ROLE = "tau-clusterqueue-reader-v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
# The Pod Security level namespaces the controller creates enforce, unless the platform
# configures another (chart value podSecurity.enforce -> --pod-security-enforce; the chart's
# empty default leaves it to this one definition). Every pod tau renders passes it.
DEFAULT_POD_SECURITY = "restricted"
POD_SECURITY_LEVELS = ("privileged", "baseline", "restricted")

# Reasons.
ADDITIONAL_WORKSPACE_BLOCKED = keys.REASON_ADDITIONAL_WORKSPACE_BLOCKED
QUEUE_UNRESOLVED = "QueueUnresolved"
NO_DRIFT = "NoDrift"
NAMESPACE_RECONCILE_FAILED = "NamespaceReconcileFailed"
QUEUE_CLEANUP_FAILED = "QueueCleanupFailed"
RBAC_CLEANUP_FAILED = "RBACCleanupFailed"
NAMESPACE_CLEANUP_FAILED = "NamespaceCleanupFailed"
EXISTING_CLUSTER_AUTHORIZATION = "ExistingClusterAuthorization"
ROLE_BINDING_READY = "RoleBindingReady"
AUTHORIZATION_NOT_READY = "AuthorizationNotReady"
QUEUE_READY = "QueueReady"
QUEUE_NOT_READY = "QueueNotReady"
NOT_CONFIGURED = "NotConfigured"
SERVICE_ACCOUNT_READY = "ServiceAccountReady"
SERVICE_ACCOUNT_NOT_READY = "ServiceAccountNotReady"
LOG_CONNECTION_PUBLISHED = "LogConnectionPublished"
LOG_CONNECTION_NOT_PUBLISHED = "LogConnectionNotPublished"


class ReconcileError(Exception):
    """A step failed for a reason worth reporting in a condition message."""


# --- pure decisions ---------------------------------------------------------------------


def ownership_labels(workspace: str) -> dict[str, str]:
    return {keys.APP_MANAGED_BY: keys.CONTROLLER_NAME, keys.WORKSPACE: workspace}


def owned_by(obj: dict[str, Any] | None, workspace: str) -> bool:
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in ownership_labels(workspace).items())


def owner_selector(workspace: str) -> str:
    return ",".join(f"{key}={value}" for key, value in ownership_labels(workspace).items())


def target_namespace(workspace: dict[str, Any]) -> str:
    target = (workspace.get("spec") or {}).get("target") or {}
    namespace: str = target.get("namespace") or workspace["metadata"]["name"]
    return namespace


def is_reserved(namespace: str, system_namespace: str) -> bool:
    return namespace in (
        system_namespace,
        LEGACY_SYSTEM_NAMESPACE,
        "default",
    ) or namespace.startswith("kube-")


def resolve_primary(workspaces: list[dict[str, Any]]) -> str:
    """The one active workspace: the marked one, else the oldest live one (ties by name)."""
    marked: list[str] = [
        w["metadata"]["name"]
        for w in workspaces
        if (w["metadata"].get("annotations") or {}).get(keys.PRIMARY_WORKSPACE) == "true"
    ]
    if len(marked) > 1:
        raise ReconcileError(
            f"several TauWorkspaces are marked primary: {', '.join(sorted(marked))}"
        )
    if marked:
        return marked[0]
    live = [w for w in workspaces if not w["metadata"].get("deletionTimestamp")]
    if not live:
        raise ReconcileError("no TauWorkspace can become primary")
    oldest = min(
        live, key=lambda w: (w["metadata"].get("creationTimestamp", ""), w["metadata"]["name"])
    )
    oldest_name: str = oldest["metadata"]["name"]
    return oldest_name


def rbac_subject(spec: dict[str, Any], service_account_namespace: str) -> dict[str, Any]:
    subject = spec.get("kubernetesSubject") or {}
    out = {"kind": subject.get("kind", ""), "name": subject.get("name", "")}
    if out["kind"] == "ServiceAccount":
        out["namespace"] = service_account_namespace
    else:
        out["apiGroup"] = RBAC_GROUP
    return out


def enforced_pod_security(existing: dict[str, Any] | None, labels: dict[str, str]) -> str | None:
    """The namespace's enforce level once `labels` are applied (published in the status)."""
    current = ((existing or {}).get("metadata") or {}).get("labels") or {}
    return {**current, **labels}.get(keys.PSA_ENFORCE)


def reader_name(workspace: str) -> str:
    return f"tau-workspace-reader-{workspace}"


def clusterqueue_binding_name(workspace: str) -> str:
    return f"tau-clusterqueue-reader-{workspace}"


def desired_rbac(
    workspace: dict[str, Any], namespace: str, system_namespace: str
) -> list[tuple[Resource, dict[str, Any]]]:
    """The four RBAC objects a workspace-rbac workspace owns, in creation order."""
    name = workspace["metadata"]["name"]
    spec = workspace.get("spec") or {}
    labels = ownership_labels(name)

    def meta(obj_name: str, obj_namespace: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {"name": obj_name, "labels": dict(labels)}
        if obj_namespace:
            out["namespace"] = obj_namespace
        return out

    researcher = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": meta(RESEARCHER_ROLE, namespace),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": RESEARCHER_ROLE},
        "subjects": [rbac_subject(spec, namespace)],
    }
    queue_reader = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "ClusterRoleBinding",
        "metadata": meta(clusterqueue_binding_name(name)),
        "roleRef": {
            "apiGroup": RBAC_GROUP,
            "kind": "ClusterRole",
            "name": CLUSTERQUEUE_READER_ROLE,
        },
        "subjects": [rbac_subject(spec, namespace)],
    }
    reader_role = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "Role",
        "metadata": meta(reader_name(name), system_namespace),
        "rules": [
            {
                "apiGroups": [keys.DOMAIN.rstrip("/")],
                "resources": ["workspaces", "workspaces/status"],
                "resourceNames": [name],
                "verbs": ["get"],
            },
            {
                "apiGroups": [keys.DOMAIN.rstrip("/")],
                "resources": ["quotarequests"],
                # list: `tau workspace quota show` lists the open requests beside the quota.
                "verbs": ["create", "get", "list"],
            },
        ],
    }
    reader_binding = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": meta(reader_name(name), system_namespace),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": reader_name(name)},
        "subjects": [rbac_subject(spec, system_namespace)],
    }
    return [
        (k.ROLE_BINDINGS, researcher),
        (k.CLUSTER_ROLE_BINDINGS, queue_reader),
        (k.ROLES, reader_role),
        (k.ROLE_BINDINGS, reader_binding),
    ]


def desired_log_connection(workspace: str, namespace: str, offload: LogOffload) -> dict[str, Any]:
    """The ConfigMap that tells `tau logs` where the workspace's offloaded container logs are.

    The platform declares the connection once (chart values `logOffload.kusto`); publishing it
    per workspace is what lets every namespace, including one created after the install,
    discover it without researchers knowing ADX names."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": keys.LOG_CONNECTION_CONFIGMAP,
            "namespace": namespace,
            "labels": ownership_labels(workspace),
        },
        "data": publication(offload),
    }


def namespace_metadata(
    workspace: dict[str, Any],
    queue: str,
    existing: dict[str, Any] | None,
    pod_security: str = DEFAULT_POD_SECURITY,
) -> tuple[dict[str, str], dict[str, str | None]]:
    """Labels to set and annotations to set/remove (None) on the target namespace.

    A namespace the controller creates enforces the platform's Pod Security level (chart
    value `podSecurity.enforce`, default restricted) and warns and audits at restricted; a
    label already on the namespace is the platform's per-namespace choice and is kept."""
    name = workspace["metadata"]["name"]
    spec = workspace.get("spec") or {}
    labels = {keys.WORKSPACE: name, keys.LOCAL_QUEUE: queue, keys.KUEUE_DEFAULT_LOCAL_QUEUE: queue}
    if (spec.get("target") or {}).get("createNamespace"):
        labels[keys.APP_MANAGED_BY] = keys.CONTROLLER_NAME
        current = ((existing or {}).get("metadata") or {}).get("labels") or {}
        defaults = {keys.PSA_ENFORCE: pod_security, keys.PSA_AUDIT: "restricted"}
        defaults[keys.PSA_WARN] = "restricted"
        for key, value in defaults.items():
            if existing is None or key not in current:
                labels[key] = value
    output_root = (spec.get("defaults") or {}).get("outputRoot") or None
    return labels, {keys.RESULT_SCOPE: output_root}


def namespace_patch(
    existing: dict[str, Any], labels: dict[str, str], annotations: dict[str, str | None]
) -> dict[str, Any] | None:
    """The merge patch that brings `existing` to the wanted metadata, or None if it has it."""
    meta = existing.get("metadata") or {}
    have_labels = meta.get("labels") or {}
    have_annotations = meta.get("annotations") or {}
    patch: dict[str, Any] = {}
    label_changes = {k_: v for k_, v in labels.items() if have_labels.get(k_) != v}
    annotation_changes = {k_: v for k_, v in annotations.items() if have_annotations.get(k_) != v}
    if label_changes:
        patch.setdefault("metadata", {})["labels"] = label_changes
    if annotation_changes:
        patch.setdefault("metadata", {})["annotations"] = annotation_changes
    return patch or None


def blocked_conditions(name: str, primary: str, generation: int) -> list[dict[str, Any]]:
    message = f"TauWorkspace {name} is blocked: {primary} is the active workspace of this cluster"
    return [
        condition(keys.COND_RBAC_READY, False, ADDITIONAL_WORKSPACE_BLOCKED, message, generation),
        condition(keys.COND_QUEUE_READY, False, ADDITIONAL_WORKSPACE_BLOCKED, message, generation),
        condition(keys.COND_DRIFT_DETECTED, False, NO_DRIFT, "", generation),
    ]


# --- the reconciler ---------------------------------------------------------------------


@dataclass
class SyncResult:
    conditions: list[dict[str, Any]] = field(default_factory=list)
    resolved_namespace: str | None = None
    queue: dict[str, str] | None = None
    pod_security: str | None = None


class WorkspaceReconciler:
    def __init__(
        self,
        client: k.ControllerClient,
        system_namespace: str,
        pod_security: str = DEFAULT_POD_SECURITY,
        log_offload: LogOffload | None = None,
    ) -> None:
        self.client = client
        self.system_namespace = system_namespace
        self.pod_security = pod_security
        self.log_offload = log_offload

    # Entry point: returns seconds until the next pass, or None when none is needed.
    def reconcile(self, namespace: str, name: str) -> float | None:
        if namespace != self.system_namespace:
            log.info("ignoring TauWorkspace %s/%s outside the system namespace", namespace, name)
            return None
        ws = self.client.get_or_none(k.TAU_WORKSPACES, name, namespace)
        if ws is None:
            return None
        meta = ws["metadata"]
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp"):
            if keys.WORKSPACE_FINALIZER in finalizers:
                self.access_cleanup(name)
                self._set_finalizers(ws, [f for f in finalizers if f != keys.WORKSPACE_FINALIZER])
            return None
        if keys.WORKSPACE_FINALIZER not in finalizers:
            self._set_finalizers(ws, [*finalizers, keys.WORKSPACE_FINALIZER])
            return 0.0
        generation = meta.get("generation", 0)
        primary = resolve_primary(self.client.list(k.TAU_WORKSPACES, namespace))
        if primary != name:
            self.access_cleanup(name)
            conditions = blocked_conditions(name, primary, generation)
            self._write_status(ws, conditions, target_namespace(ws), None)
            return REQUEUE_NOT_READY
        if (meta.get("annotations") or {}).get(keys.PRIMARY_WORKSPACE) != "true":
            patch = {"metadata": {"annotations": {keys.PRIMARY_WORKSPACE: "true"}}}
            self.client.patch(k.TAU_WORKSPACES, name, patch, namespace)
            return 0.0
        queue = ((ws.get("spec") or {}).get("queue") or "").strip()
        if not queue:
            queue, problem = self._default_queue()
            if not queue:
                message = f"cannot resolve the workspace queue: {problem}"
                conditions = [
                    condition(keys.COND_RBAC_READY, False, QUEUE_UNRESOLVED, message, generation),
                    condition(keys.COND_QUEUE_READY, False, QUEUE_UNRESOLVED, message, generation),
                    condition(
                        keys.COND_WORKLOAD_IDENTITY_READY,
                        "Unknown",
                        QUEUE_UNRESOLVED,
                        message,
                        generation,
                    ),
                    condition(keys.COND_DRIFT_DETECTED, False, NO_DRIFT, "", generation),
                ]
                self._write_status(ws, conditions, self._previous_namespace(ws), None)
                return REQUEUE_NOT_READY
        result = self.sync(ws, queue)
        phase = self._write_status(
            ws, result.conditions, result.resolved_namespace, result.queue, result.pod_security
        )
        return REQUEUE_READY if phase == "Ready" else REQUEUE_NOT_READY

    def _default_queue(self) -> tuple[str, str]:
        try:
            cluster = self.client.get_or_none(k.TAU_CLUSTERS, "cluster")
        except KubeError as error:
            return "", error.message
        if cluster is None:
            return "", "TauCluster cluster does not exist and spec.queue is empty"
        defaults = (cluster.get("spec") or {}).get("workspaceDefaults") or {}
        queue = str(defaults.get("defaultQueue") or "").strip()
        return queue, "" if queue else "TauCluster cluster has no workspaceDefaults.defaultQueue"

    @staticmethod
    def _previous_namespace(ws: dict[str, Any]) -> str | None:
        return ((ws.get("status") or {}).get("target") or {}).get("resolvedNamespace")

    # --- sync -------------------------------------------------------------------------

    def sync(self, ws: dict[str, Any], queue: str) -> SyncResult:
        name = ws["metadata"]["name"]
        generation = ws["metadata"].get("generation", 0)
        spec = ws.get("spec") or {}
        target = target_namespace(ws)
        identity = spec.get("workloadIdentity")
        result = SyncResult(resolved_namespace=self._previous_namespace(ws))

        def cond(type_: str, status: str | bool, reason: str, message: str = "") -> Condition:
            return condition(type_, status, reason, message, generation)

        try:
            result.pod_security = self.ensure_namespace(ws, target, queue)
        except (ReconcileError, KubeError) as error:
            message = f"namespace {target}: {_text(error)}"
            wi = (
                cond(keys.COND_WORKLOAD_IDENTITY_READY, False, SERVICE_ACCOUNT_NOT_READY, message)
                if identity
                else cond(keys.COND_WORKLOAD_IDENTITY_READY, "Unknown", NOT_CONFIGURED)
            )
            logs = (
                cond(keys.COND_LOG_CONNECTION_READY, False, LOG_CONNECTION_NOT_PUBLISHED, message)
                if self.log_offload
                else self._log_connection_not_configured(generation)
            )
            result.conditions = [
                cond(keys.COND_RBAC_READY, False, AUTHORIZATION_NOT_READY, message),
                cond(keys.COND_QUEUE_READY, False, QUEUE_NOT_READY, message),
                wi,
                logs,
                cond(keys.COND_DRIFT_DETECTED, True, NAMESPACE_RECONCILE_FAILED, message),
            ]
            return result
        result.resolved_namespace = target
        drift = cond(keys.COND_DRIFT_DETECTED, False, NO_DRIFT)

        try:
            if (spec.get("authorization") or {}).get("mode") == CLUSTER_WIDE:
                self.remove_workspace_rbac(name, target)
                rbac = cond(
                    keys.COND_RBAC_READY,
                    True,
                    EXISTING_CLUSTER_AUTHORIZATION,
                    "the platform grants researcher access outside this workspace",
                )
            else:
                self.ensure_workspace_rbac(ws, target)
                rbac = cond(
                    keys.COND_RBAC_READY,
                    True,
                    ROLE_BINDING_READY,
                    f"RoleBinding {RESEARCHER_ROLE} binds the researcher subject in {target}",
                )
        except (ReconcileError, KubeError) as error:
            rbac = cond(keys.COND_RBAC_READY, False, AUTHORIZATION_NOT_READY, _text(error))

        try:
            result.queue = self.ensure_local_queue(name, target, queue)
            queue_cond = cond(
                keys.COND_QUEUE_READY,
                True,
                QUEUE_READY,
                f"LocalQueue {target}/{queue} and its backing ClusterQueue are ready",
            )
            try:
                self.remove_other_local_queues(name, target, queue)
            except KubeError as error:
                drift = cond(keys.COND_DRIFT_DETECTED, True, QUEUE_CLEANUP_FAILED, _text(error))
        except (ReconcileError, KubeError) as error:
            queue_cond = cond(keys.COND_QUEUE_READY, False, QUEUE_NOT_READY, _text(error))

        if identity:
            try:
                self.ensure_service_account(name, target, identity)
                wi = cond(
                    keys.COND_WORKLOAD_IDENTITY_READY,
                    True,
                    SERVICE_ACCOUNT_READY,
                    f"ServiceAccount {target}/{identity['serviceAccountName']} is annotated",
                )
            except (ReconcileError, KubeError) as error:
                wi = cond(
                    keys.COND_WORKLOAD_IDENTITY_READY,
                    False,
                    SERVICE_ACCOUNT_NOT_READY,
                    _text(error),
                )
        else:
            wi = cond(
                keys.COND_WORKLOAD_IDENTITY_READY,
                "Unknown",
                NOT_CONFIGURED,
                "spec.workloadIdentity is not set",
            )

        logs = self.publish_log_connection(name, target, generation)

        ready = [rbac, queue_cond] + ([wi] if identity else [])
        if all(c["status"] == "True" for c in ready):
            try:
                self.remove_stale(ws, target)
            except (ReconcileError, KubeError) as error:
                drift = cond(keys.COND_DRIFT_DETECTED, True, RBAC_CLEANUP_FAILED, _text(error))
            previous = self._previous_namespace(ws)
            if previous and previous != target and drift["status"] == "False":
                try:
                    self.release_namespace(name, previous)
                except KubeError as error:
                    drift = cond(
                        keys.COND_DRIFT_DETECTED, True, NAMESPACE_CLEANUP_FAILED, _text(error)
                    )
        result.conditions = [rbac, queue_cond, wi, logs, drift]
        return result

    def publish_log_connection(self, name: str, target: str, generation: int) -> Condition:
        """Write the workspace's log connection; diagnostic only, like workload identity, as
        `tau logs` still reads live pods (and takes --kusto-* flags) without it."""
        if self.log_offload is None:
            return self._log_connection_not_configured(generation)
        where = f"ConfigMap {target}/{keys.LOG_CONNECTION_CONFIGMAP}"
        try:
            desired = desired_log_connection(name, target, self.log_offload)
            self._ensure_owned(k.CONFIG_MAPS, desired, name)
        except (ReconcileError, KubeError) as error:
            return condition(
                keys.COND_LOG_CONNECTION_READY,
                False,
                LOG_CONNECTION_NOT_PUBLISHED,
                _text(error),
                generation,
            )
        offload = self.log_offload
        message = (
            f"{where} names ADX {offload.endpoint} database {offload.database}"
            f" cluster {offload.cluster}"
        )
        return condition(
            keys.COND_LOG_CONNECTION_READY, True, LOG_CONNECTION_PUBLISHED, message, generation
        )

    @staticmethod
    def _log_connection_not_configured(generation: int) -> Condition:
        return condition(
            keys.COND_LOG_CONNECTION_READY,
            "Unknown",
            NOT_CONFIGURED,
            "the platform publishes no log offload connection"
            f" (chart values {keys.LOG_OFFLOAD_VALUES})",
            generation,
        )

    def ensure_namespace(self, ws: dict[str, Any], target: str, queue: str) -> str | None:
        """Create or label the target namespace; returns the Pod Security level it enforces."""
        name = ws["metadata"]["name"]
        if is_reserved(target, self.system_namespace):
            raise ReconcileError(f"{target} is reserved for the platform and cannot be a target")
        existing = self.client.get_or_none(k.NAMESPACES, target)
        create = bool(((ws.get("spec") or {}).get("target") or {}).get("createNamespace"))
        labels, annotations = namespace_metadata(ws, queue, existing, self.pod_security)
        if existing is None:
            if not create:
                raise ReconcileError(
                    "does not exist and spec.target.createNamespace is false;"
                    " create it or allow the controller to"
                )
            body = {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": target,
                    "labels": labels,
                    "annotations": {a: v for a, v in annotations.items() if v},
                },
            }
            self.client.create(k.NAMESPACES, body)
            return enforced_pod_security(None, labels)
        owner = ((existing.get("metadata") or {}).get("labels") or {}).get(keys.WORKSPACE)
        if owner and owner != name:
            other = self.client.get_or_none(k.TAU_WORKSPACES, owner, self.system_namespace)
            if other is not None:
                raise ReconcileError(f"already assigned to TauWorkspace {owner}")
            log.info("reclaiming namespace %s from deleted TauWorkspace %s", target, owner)
        patch = namespace_patch(existing, labels, annotations)
        if patch:
            self.client.patch(k.NAMESPACES, target, patch)
        return enforced_pod_security(existing, labels)

    def _ensure_owned(self, resource: Resource, desired: dict[str, Any], workspace: str) -> None:
        """Create `desired`, or update it if this workspace owns it; never adopt."""
        meta = desired["metadata"]
        namespace = meta.get("namespace", "")
        existing = self.client.get_or_none(resource, meta["name"], namespace)
        where = f"{resource.kind} {namespace + '/' if namespace else ''}{meta['name']}"
        if existing is None:
            try:
                self.client.create(resource, desired, namespace)
            except k.ConflictError as error:
                raise ReconcileError(f"{where} appeared while creating it; retrying") from error
            return
        if not owned_by(existing, workspace):
            raise ReconcileError(
                f"{where} exists but is not managed by {keys.CONTROLLER_NAME} for this workspace;"
                " refusing to adopt it"
            )
        patch = {
            key: value
            for key, value in desired.items()
            if key not in ("apiVersion", "kind", "metadata", "roleRef")
            and existing.get(key) != value
        }
        existing_labels = existing["metadata"].get("labels") or {}
        if any(existing_labels.get(a) != v for a, v in (meta.get("labels") or {}).items()):
            patch["metadata"] = {"labels": meta["labels"]}
        existing_annotations = existing["metadata"].get("annotations") or {}
        wanted_annotations = meta.get("annotations") or {}
        if any(existing_annotations.get(a) != v for a, v in wanted_annotations.items()):
            patch.setdefault("metadata", {})["annotations"] = wanted_annotations
        if patch:
            self.client.patch(resource, meta["name"], patch, namespace)

    def ensure_workspace_rbac(self, ws: dict[str, Any], target: str) -> None:
        spec = ws.get("spec") or {}
        if not spec.get("principalRef") or not spec.get("kubernetesSubject"):
            raise ReconcileError(
                "workspace-rbac needs spec.principalRef and spec.kubernetesSubject"
            )
        name = ws["metadata"]["name"]
        for resource, desired in desired_rbac(ws, target, self.system_namespace):
            self._ensure_owned(resource, desired, name)

    def _delete_owned(self, resource: Resource, obj_name: str, namespace: str, ws: str) -> None:
        existing = self.client.get_or_none(resource, obj_name, namespace)
        if existing is None:
            return
        if not owned_by(existing, ws):
            where = f"{namespace + '/' if namespace else ''}{obj_name}"
            raise ReconcileError(
                f"refusing to delete {resource.kind} {where}: it is not managed by"
                f" {keys.CONTROLLER_NAME} for TauWorkspace {ws}"
            )
        self.client.delete(resource, obj_name, namespace, ignore_missing=True)

    def remove_workspace_rbac(self, name: str, target: str) -> None:
        self._delete_owned(k.ROLE_BINDINGS, RESEARCHER_ROLE, target, name)
        self._delete_owned(k.CLUSTER_ROLE_BINDINGS, clusterqueue_binding_name(name), "", name)
        self._delete_owned(k.ROLE_BINDINGS, reader_name(name), self.system_namespace, name)
        self._delete_owned(k.ROLES, reader_name(name), self.system_namespace, name)

    def ensure_local_queue(self, name: str, target: str, queue: str) -> dict[str, str]:
        status = {"localQueue": queue, "clusterQueue": queue}
        existing = self.client.get_or_none(k.LOCAL_QUEUES, queue, target)
        labels = (existing or {}).get("metadata", {}).get("labels") or {}
        if existing is not None and not owned_by(existing, name):
            if labels.get(keys.APP_MANAGED_BY) == keys.CONTROLLER_NAME:
                raise ReconcileError(
                    f"LocalQueue {target}/{queue} belongs to TauWorkspace"
                    f" {labels.get(keys.WORKSPACE, '?')}"
                )
            backing = (existing.get("spec") or {}).get("clusterQueue") or ""
            if not backing:
                raise ReconcileError(f"platform LocalQueue {target}/{queue} has no clusterQueue")
            if self.client.get_or_none(k.CLUSTER_QUEUES, backing) is None:
                raise ReconcileError(
                    f"backing ClusterQueue {backing} of {target}/{queue} is missing"
                )
            return {"localQueue": queue, "clusterQueue": backing}
        if self.client.get_or_none(k.CLUSTER_QUEUES, queue) is None:
            raise ReconcileError(f"backing ClusterQueue {queue} is not ready: it does not exist")
        if existing is None:
            body = {
                "apiVersion": k.LOCAL_QUEUES.api_version,
                "kind": "LocalQueue",
                "metadata": {"name": queue, "namespace": target, "labels": ownership_labels(name)},
                "spec": {"clusterQueue": queue},
            }
            try:
                self.client.create(k.LOCAL_QUEUES, body, target)
            except k.ConflictError as error:
                raise ReconcileError(f"LocalQueue {target}/{queue} appeared; retrying") from error
        elif (existing.get("spec") or {}).get("clusterQueue") != queue:
            self.client.patch(k.LOCAL_QUEUES, queue, {"spec": {"clusterQueue": queue}}, target)
        return status

    def remove_other_local_queues(self, name: str, target: str, queue: str) -> None:
        for lq in self.client.list(k.LOCAL_QUEUES, label_selector=owner_selector(name)):
            meta = lq["metadata"]
            if (meta.get("namespace"), meta["name"]) != (target, queue):
                self.client.delete(
                    k.LOCAL_QUEUES, meta["name"], meta["namespace"], ignore_missing=True
                )

    def ensure_service_account(self, name: str, target: str, identity: dict[str, str]) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": identity["serviceAccountName"],
                "namespace": target,
                "labels": {**ownership_labels(name), keys.AZURE_WORKLOAD_IDENTITY_USE: "true"},
                "annotations": {keys.AZURE_WORKLOAD_IDENTITY_CLIENT_ID: identity["clientId"]},
            },
        }
        self._ensure_owned(k.SERVICE_ACCOUNTS, body, name)

    def remove_stale(self, ws: dict[str, Any], target: str) -> None:
        """Delete owned RBAC, ServiceAccounts and log connections the current spec (or the
        controller's log offload setting) no longer wants."""
        name = ws["metadata"]["name"]
        spec = ws.get("spec") or {}
        workspace_rbac = (spec.get("authorization") or {}).get("mode") != CLUSTER_WIDE
        identity = spec.get("workloadIdentity") or {}
        keep = set()
        if workspace_rbac:
            keep.add(("RoleBinding", target, RESEARCHER_ROLE))
        if identity:
            keep.add(("ServiceAccount", target, identity["serviceAccountName"]))
        if self.log_offload:
            keep.add(("ConfigMap", target, keys.LOG_CONNECTION_CONFIGMAP))
        for resource in (k.ROLES, k.ROLE_BINDINGS, k.SERVICE_ACCOUNTS, k.CONFIG_MAPS):
            for obj in self.client.list(resource, label_selector=owner_selector(name)):
                meta = obj["metadata"]
                if meta.get("namespace") == self.system_namespace:
                    continue
                if (resource.kind, meta.get("namespace"), meta["name"]) in keep:
                    continue
                self.client.delete(resource, meta["name"], meta["namespace"], ignore_missing=True)

    def release_namespace(self, name: str, previous: str) -> None:
        """Strip this workspace's metadata from a namespace it no longer targets."""
        if is_reserved(previous, self.system_namespace):
            return
        ns = self.client.get_or_none(k.NAMESPACES, previous)
        if ns is None:
            return
        labels = ns["metadata"].get("labels") or {}
        if labels.get(keys.WORKSPACE) != name:
            return
        stripped = (keys.APP_MANAGED_BY, keys.WORKSPACE, keys.LOCAL_QUEUE)
        patch = {
            "metadata": {
                "labels": dict.fromkeys((*stripped, keys.KUEUE_DEFAULT_LOCAL_QUEUE)),
                "annotations": {keys.RESULT_SCOPE: None},
            }
        }
        self.client.patch(k.NAMESPACES, previous, patch)

    def access_cleanup(self, name: str) -> None:
        """Remove everything that grants access through this workspace (and the log connection
        published for it); keep the namespace."""
        selector = owner_selector(name)
        for resource in (
            k.ROLE_BINDINGS,
            k.ROLES,
            k.SERVICE_ACCOUNTS,
            k.CONFIG_MAPS,
            k.LOCAL_QUEUES,
        ):
            for obj in self.client.list(resource, label_selector=selector):
                meta = obj["metadata"]
                if (
                    resource is not k.LOCAL_QUEUES
                    and meta.get("namespace") == self.system_namespace
                ):
                    continue
                self.client.delete(resource, meta["name"], meta["namespace"], ignore_missing=True)
        self._delete_owned(k.CLUSTER_ROLE_BINDINGS, clusterqueue_binding_name(name), "", name)
        self._delete_owned(k.ROLE_BINDINGS, reader_name(name), self.system_namespace, name)
        self._delete_owned(k.ROLES, reader_name(name), self.system_namespace, name)

    # --- writes -----------------------------------------------------------------------

    def _set_finalizers(self, ws: dict[str, Any], finalizers: list[str]) -> None:
        meta = ws["metadata"]
        patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}}
        self.client.patch(k.TAU_WORKSPACES, meta["name"], patch, meta["namespace"])

    def _write_status(
        self,
        ws: dict[str, Any],
        conditions: list[dict[str, Any]],
        resolved_namespace: str | None,
        queue: dict[str, str] | None,
        pod_security: str | None = None,
    ) -> str:
        previous = ws.get("status") or {}
        merged = merge_conditions(previous.get("conditions"), conditions)
        phase = workspace_phase(merged)
        status: dict[str, Any] = {
            "phase": phase,
            "observedGeneration": ws["metadata"].get("generation", 0),
            "conditions": merged,
        }
        if resolved_namespace:
            status["target"] = {"resolvedNamespace": resolved_namespace}
            if pod_security:
                status["target"]["podSecurity"] = pod_security
        if queue:
            status["queue"] = queue
        if not semantically_equal(previous, status):
            self.client.replace(k.TAU_WORKSPACES, {**ws, "status": status}, subresource="status")
        return phase


def _text(error: Exception) -> str:
    return error.message if isinstance(error, KubeError) else str(error)

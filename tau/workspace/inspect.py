"""Read-only workspace views: list, status (with the owner of each fix), check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau import keys
from tau.connection import (
    PLATFORM,
    READINESS,
    LayerFailure,
    denied_workspace,
    live_contract,
    not_taugrid,
    readiness_problem,
    workspace_objects,
)
from tau.kube import AuthorizationError, KubeClient, NotFoundError
from tau.kube.resources import PERSISTENT_VOLUME_CLAIMS, TAU_WORKSPACES

# What the platform does about a failing condition (TauWorkspace reference, readiness table).
CONDITION_ACTIONS = {
    "RBACReady": (
        PLATFORM,
        "workspace-rbac: correct the declared subject/role and let the controller reconcile; "
        "cluster-wide: repair the pre-existing authorization",
    ),
    "QueueReady": (
        PLATFORM,
        "restore the named LocalQueue and its backing ClusterQueue (do not add a second queue)",
    ),
    "DriftDetected": (
        PLATFORM,
        "fix the dependency or workspace spec named in the message; the controller restores "
        "its owned objects",
    ),
    "WorkloadIdentityReady": (
        "platform operator (Azure identity)",
        "diagnostic only: fix the managed identity / federated credential before handing off "
        "workloads that use Azure Workload Identity",
    ),
    "LogConnectionReady": (
        f"platform operator (chart values {keys.LOG_OFFLOAD_VALUES})",
        "diagnostic only: set the log offload values, or remove the tau-log-connection "
        "ConfigMap the controller refuses to adopt; until then `tau logs` needs --kusto-* flags "
        "for removed runs",
    ),
}


def list_workspaces(kube: KubeClient, system_namespace: str) -> list[dict[str, Any]]:
    rows = []
    for obj in workspace_objects(kube, system_namespace):
        live = live_contract(obj)
        rows.append(
            {
                "name": live.name,
                "phase": live.phase,
                "namespace": live.namespace
                or (obj.get("spec", {}).get("target") or {}).get("namespace", ""),
                "queue": live.queue or obj.get("spec", {}).get("queue", ""),
                "authorization": live.authorization_mode,
                "created": obj["metadata"].get("creationTimestamp", ""),
            }
        )
    return rows


def get_workspace(kube: KubeClient, name: str, system_namespace: str) -> dict[str, Any]:
    try:
        return kube.get(TAU_WORKSPACES, name, system_namespace)
    except NotFoundError as error:
        if error.resource_missing:
            raise not_taugrid(kube) from None
        raise LayerFailure(
            READINESS,
            f'TauWorkspace "{name}" does not exist in namespace "{system_namespace}"',
            hint="list them with `tau workspace list`",
        ) from None
    except AuthorizationError as error:
        raise denied_workspace(kube, name, system_namespace, error) from None


def workspace_status(obj: dict[str, Any]) -> dict[str, Any]:
    """Agent-readable status: phase, resolved contract and every condition with its owner."""
    live = live_contract(obj)
    metadata = obj.get("metadata") or {}
    status = obj.get("status") or {}
    conditions = []
    for condition in status.get("conditions") or []:
        kind = condition.get("type", "")
        owner, action = CONDITION_ACTIONS.get(kind, (PLATFORM, ""))
        healthy = condition.get("status") == ("False" if kind == "DriftDetected" else "True")
        conditions.append(
            {
                "type": kind,
                "status": condition.get("status", ""),
                "reason": condition.get("reason", ""),
                "message": condition.get("message", ""),
                "owner": "" if healthy else owner,
                "action": "" if healthy else action,
            }
        )
    problem = readiness_problem(obj)
    return {
        "name": live.name,
        "phase": live.phase,
        "ready": not problem,
        "problem": problem,
        "generation": metadata.get("generation", 0),
        "observedGeneration": status.get("observedGeneration"),
        "authorization": {"mode": live.authorization_mode, "role": live.role},
        "resolved": {
            "namespace": live.namespace,
            "localQueue": live.queue,
            "clusterQueue": live.cluster_queue,
            "serviceAccount": live.service_account,
        },
        "conditions": conditions,
    }


@dataclass(frozen=True)
class PvcCheck:
    name: str
    namespace: str
    state: str  # Bound, Pending, Lost, missing

    @property
    def ok(self) -> bool:
        return self.state == "Bound"


def check_pvc(kube: KubeClient, name: str, namespace: str) -> PvcCheck:
    """Storage is not part of Ready, so a workspace PVC is checked and reported on its own."""
    obj = kube.get_or_none(PERSISTENT_VOLUME_CLAIMS, name, namespace)
    if obj is None:
        return PvcCheck(name, namespace, "missing")
    return PvcCheck(name, namespace, (obj.get("status") or {}).get("phase") or "Pending")

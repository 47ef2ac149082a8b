"""Pods for the local cluster's real node: what a test needs to run a container there.

Every pod here passes Pod Security ``restricted`` (non-root, no privilege escalation, no
capabilities, the runtime's seccomp profile), so tests run them in namespaces that enforce it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller_harness import wait_for
from lifecycle_env import Workspace, hostpath_volume, tau_cluster
from tau_cli import run_tau

from hack.localcluster import LocalCluster, wait_until
from hack.localcluster import fixtures as fx

RESTRICTED = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "latest",
}

CONTAINER_SECURITY: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "runAsNonRoot": True,
    "runAsUser": 65534,
    "seccompProfile": {"type": "RuntimeDefault"},
}


def enforce_restricted(cluster: LocalCluster, namespace: str) -> None:
    labels = [f"{key}={value}" for key, value in RESTRICTED.items()]
    cluster.kubectl("label", "namespace", namespace, "--overwrite", *labels)


def expect_restricted_by_default(ws: Workspace) -> None:
    """Nobody labels a workspace namespace the controller created: it enforces Pod Security
    ``restricted`` (the controller's default) and the TauWorkspace says so, so tau renders
    restricted pods for it without a run config asking."""
    labels = (ws.get("namespace", ws.namespace) or {})["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted", labels
    workspace = ws.get("workspaces.tau.azure.com", ws.name, "-n", ws.system_namespace) or {}
    assert workspace["status"]["target"]["podSecurity"] == "restricted", workspace["status"]


def shell_pod(
    cluster: LocalCluster,
    name: str,
    script: str,
    *,
    restart: str = "Never",
    labels: dict[str, str] | None = None,
    volumes: list[dict[str, Any]] | None = None,
    mounts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A busybox pod pinned to the real node, running ``script`` with ``sh -c``."""
    container: dict[str, Any] = {
        "name": "main",
        "image": cluster.images[fx.SHELL_IMAGE],
        "command": ["sh", "-c", script],
        "securityContext": CONTAINER_SECURITY,
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
    }
    if mounts:
        container["volumeMounts"] = mounts
    spec: dict[str, Any] = {
        "restartPolicy": restart,
        "nodeSelector": dict(fx.REAL_NODE_SELECTOR),
        "tolerations": [fx.REAL_NODE_TOLERATION],
        "securityContext": {"fsGroup": 65534},
        "containers": [container],
    }
    if volumes:
        spec["volumes"] = volumes
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": name}},
        "spec": spec,
    }


def pod_phase(cluster: LocalCluster, namespace: str, name: str) -> str:
    result = cluster.kubectl(
        "get", "pod", name, "-n", namespace, "-o", "jsonpath={.status.phase}", check=False
    )
    return result.stdout.strip() if result.returncode == 0 else ""


def wait_for_phase(
    cluster: LocalCluster, namespace: str, name: str, phases: set[str], timeout: float = 120
) -> str:
    def describe() -> str:
        return "\n" + cluster.kubectl("describe", "pod", name, "-n", namespace, check=False).stdout

    return wait_until(
        f"pod {namespace}/{name} to reach {sorted(phases)}",
        lambda: (phase := pod_phase(cluster, namespace, name)) in phases and phase,
        timeout,
        describe,
    )


def offer_real_node(ws: Workspace, profiles: dict[str, dict[str, Any]]) -> None:
    """What a platform operator does to offer the real node to a workspace: its queue becomes
    the ClusterQueue holding only the real flavor, and the TauCluster publishes ``profiles``
    (name -> fields over a one-worker CPU profile) whose default LocalQueue it is. Profiles
    place runs (a run config may not add a node selector): this is how a tau run reaches the
    kubelet."""
    patch = {"spec": {"queue": fx.REAL_CLUSTER_QUEUE}}
    ws.kubectl(
        "patch", "workspaces.tau.azure.com", ws.name, "-n", ws.system_namespace,
        "--type", "merge", "-p", json.dumps(patch),
    )  # fmt: skip

    def queued() -> bool:
        queue = ws.get("localqueue", fx.REAL_CLUSTER_QUEUE, "-n", ws.namespace) or {}
        workspace = ws.get("workspaces.tau.azure.com", ws.name, "-n", ws.system_namespace) or {}
        ready = ((workspace.get("status") or {}).get("phase")) == "Ready"
        return ready and queue.get("spec", {}).get("clusterQueue") == fx.REAL_CLUSTER_QUEUE

    wait_for(f"LocalQueue {fx.REAL_CLUSTER_QUEUE} in {ws.namespace}, workspace Ready", queued, 120)
    cluster = tau_cluster(ws.namespace)
    [template, *_] = cluster["spec"]["workloadProfiles"]
    cluster["spec"]["workloadProfiles"] = [
        {
            **template,
            "name": name,
            "gpusPerWorker": 0,
            "workerCount": 1,
            "placement": "independent",
            "defaultLocalQueue": fx.REAL_CLUSTER_QUEUE,
            **fields,
        }
        for name, fields in profiles.items()
    ]
    ws.cluster.apply([cluster])

    def published() -> dict[str, Any] | None:
        tc = ws.get("clusters.tau.azure.com", "cluster") or {}
        status = tc.get("status") or {}
        current = (status.get("workloadProfiles") or {}).get("observedGeneration") == (
            tc.get("metadata", {}).get("generation")
        )
        ready = any(
            c["type"] == "WorkloadProfilesReady" and c["status"] == "True"
            for c in status.get("conditions") or []
        )
        return tc if current and ready else None

    try:
        wait_for("the real node's workload profiles to be Ready", published, timeout=120)
    except AssertionError as error:
        tc = ws.get("clusters.tau.azure.com", "cluster") or {}
        profiles_status = (tc.get("status") or {}).get("workloadProfiles")
        raise AssertionError(f"{error}; TauCluster profiles: {profiles_status}") from None
    # The workspace's queue changed under the connection the researcher pinned; once its
    # cached readiness expires, tau refuses to go on until they review and approve the change.
    approved = run_tau("workspace", "connection", cwd=ws.repo, env=ws.env, answer="y")
    assert approved.returncode == 0, approved.stderr


def hostpath_claim(ws: Workspace, claim: str, root: Path) -> None:
    """PVC ``claim`` in the workspace namespace, bound to ``root`` on this machine as a
    hostPath volume: what a pod on the real node writes there, the test reads directly.
    Returns once it is Bound, because a pod admitted to the real flavor (topology-aware) that
    cannot schedule is terminated by Kueue at once."""
    root.chmod(0o777)
    hostpath_volume(ws, claim, root)

    def bound() -> bool:
        found = ws.get("pvc", claim, "-n", ws.namespace) or {}
        return (found.get("status") or {}).get("phase") == "Bound"

    wait_for(f"PVC {ws.namespace}/{claim} to be Bound to its hostPath volume", bound, 60)

"""The TauWorkspace reconciler publishes the platform's log offload connection in the workspace
namespace (ConfigMap `tau-log-connection`), driven pass by pass against the real apiserver.

A controller configured with the connection writes it once and then leaves it alone, restores
it when edited, rewrites it when the platform's values change, and removes it when the
platform stops declaring one or the workspace goes; a ConfigMap of that name it did not
create is never adopted.
"""

from __future__ import annotations

import json

from controller_harness import condition, get, install, unique

from tau import keys
from tau.controller.kubeapi import ControllerClient
from tau.controller.workspace import REQUEUE_READY, WorkspaceReconciler
from tau.lifecycle.offload import LogOffload, published_connection

OFFLOAD = LogOffload("aks-weu-1", "https://taugridlogs.westeurope.kusto.windows.net", "Logs")


def _workspace(cluster, system: str, name: str, target: dict) -> None:
    body = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauWorkspace",
        "metadata": {"name": name, "namespace": system},
        "spec": {"authorization": {"mode": "cluster-wide"}, "queue": "jobqueue", "target": target},
    }
    cluster.kubectl("apply", "-f", "-", input=json.dumps(body))


def _settle(reconciler: WorkspaceReconciler, system: str, name: str) -> None:
    """Finalizer, primary marker, then the resources: at most three passes to Ready."""
    for _ in range(3):
        if reconciler.reconcile(system, name) == REQUEUE_READY:
            return
    raise AssertionError(f"TauWorkspace {name} did not become Ready in three passes")


def _configmap(cluster, namespace: str):
    return get(cluster, "configmap", keys.LOG_CONNECTION_CONFIGMAP, "-n", namespace)


def test_a_reconciled_workspace_gets_the_connection_and_keeps_exactly_the_declared_one(
    local_cluster,
):
    system, name = unique("tau-sys"), unique("ws-logs")
    install(local_cluster, system)
    _workspace(local_cluster, system, name, {"createNamespace": True})
    client = ControllerClient(local_cluster.kubeconfig)
    reconciler = WorkspaceReconciler(client, system, log_offload=OFFLOAD)

    def workspace():
        return get(local_cluster, "workspaces.tau.azure.com", name, "-n", system)

    _settle(reconciler, system, name)
    published = _configmap(local_cluster, name)
    assert published_connection(published, name) == OFFLOAD
    assert published["metadata"]["labels"] == {
        keys.APP_MANAGED_BY: keys.CONTROLLER_NAME,
        keys.WORKSPACE: name,
    }
    ready = workspace()
    assert ready["status"]["phase"] == "Ready"
    assert condition(ready, keys.COND_LOG_CONNECTION_READY) == ("True", "LogConnectionPublished")

    # Nothing changed: neither the ConfigMap nor the workspace status is written again.
    assert reconciler.reconcile(system, name) == REQUEUE_READY
    assert (
        _configmap(local_cluster, name)["metadata"]["resourceVersion"]
        == (published["metadata"]["resourceVersion"])
    )
    assert workspace()["metadata"]["resourceVersion"] == ready["metadata"]["resourceVersion"]

    # A researcher's edit (they may write ConfigMaps in their namespace) is put back.
    edited = json.dumps({"data": {keys.LOG_CONNECTION_KEY: '{"endpoint": "https://evil.example"}'}})
    local_cluster.kubectl(
        "patch", "configmap", keys.LOG_CONNECTION_CONFIGMAP, "-n", name, "-p", edited
    )
    reconciler.reconcile(system, name)
    assert published_connection(_configmap(local_cluster, name), name) == OFFLOAD

    # New platform values (the chart upgrade restarts the controller with new flags).
    moved = LogOffload("aks-weu-2", "https://taugridlogs2.westeurope.kusto.windows.net", "Logs2")
    WorkspaceReconciler(client, system, log_offload=moved).reconcile(system, name)
    assert published_connection(_configmap(local_cluster, name), name) == moved

    # The platform stops declaring a log offload: the published connection goes with it.
    unconfigured = WorkspaceReconciler(client, system)
    assert unconfigured.reconcile(system, name) == REQUEUE_READY
    assert _configmap(local_cluster, name) is None
    assert condition(workspace(), keys.COND_LOG_CONNECTION_READY) == ("Unknown", "NotConfigured")

    reconciler.reconcile(system, name)
    assert _configmap(local_cluster, name) is not None
    local_cluster.kubectl("delete", "workspaces.tau.azure.com", name, "-n", system, "--wait=false")
    assert reconciler.reconcile(system, name) is None
    assert workspace() is None
    assert _configmap(local_cluster, name) is None, "workspace cleanup removes its connection"
    local_cluster.kubectl("delete", "namespace", name, "--wait=false")


def test_a_connection_configmap_the_controller_did_not_create_is_never_adopted(local_cluster):
    system, name, namespace = unique("tau-sys"), unique("ws-own"), unique("ml")
    install(local_cluster, system)
    local_cluster.kubectl("create", "namespace", namespace)
    own = json.dumps({"schema": keys.LOG_CONNECTION_SCHEMA, "endpoint": "https://mine.example"})
    local_cluster.kubectl(
        "create", "configmap", keys.LOG_CONNECTION_CONFIGMAP, "-n", namespace,
        f"--from-literal={keys.LOG_CONNECTION_KEY}={own}",
    )  # fmt: skip
    _workspace(local_cluster, system, name, {"namespace": namespace})
    client = ControllerClient(local_cluster.kubeconfig)

    _settle(WorkspaceReconciler(client, system, log_offload=OFFLOAD), system, name)
    obj = get(local_cluster, "workspaces.tau.azure.com", name, "-n", system)
    assert obj["status"]["phase"] == "Ready", "the log connection is diagnostic only"
    status, reason = condition(obj, keys.COND_LOG_CONNECTION_READY)
    assert (status, reason) == ("False", "LogConnectionNotPublished")
    [logs] = [c for c in obj["status"]["conditions"] if c["type"] == "LogConnectionReady"]
    assert "refusing to adopt" in logs["message"] and namespace in logs["message"]
    assert _configmap(local_cluster, namespace)["data"] == {keys.LOG_CONNECTION_KEY: own}

    WorkspaceReconciler(client, system).reconcile(system, name)
    assert _configmap(local_cluster, namespace)["data"] == {keys.LOG_CONNECTION_KEY: own}

    local_cluster.kubectl("delete", "workspaces.tau.azure.com", name, "-n", system, "--wait=false")
    WorkspaceReconciler(client, system, log_offload=OFFLOAD).reconcile(system, name)
    assert _configmap(local_cluster, namespace)["data"] == {keys.LOG_CONNECTION_KEY: own}
    local_cluster.kubectl("delete", "namespace", namespace, "--wait=false")

"""The TauWorkspace reconciler's first passes, driven one at a time against the real apiserver.

Pass 1 only adds the finalizer, pass 2 only marks the primary workspace, pass 3 creates the
namespace and the rest; a second identical pass writes nothing.
"""

from __future__ import annotations

import json

from controller_harness import get, install, unique

from tau import keys
from tau.controller.kubeapi import ControllerClient
from tau.controller.workspace import REQUEUE_READY, WorkspaceReconciler


def test_first_passes_are_finalizer_then_marker_then_resources(local_cluster):
    system, name = unique("tau-sys"), unique("ws-passes")
    install(local_cluster, system)
    body = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauWorkspace",
        "metadata": {"name": name, "namespace": system},
        "spec": {
            "authorization": {"mode": "cluster-wide"},
            "queue": "jobqueue",
            "target": {"createNamespace": True},
        },
    }
    local_cluster.kubectl("apply", "-f", "-", input=json.dumps(body))
    reconciler = WorkspaceReconciler(ControllerClient(local_cluster.kubeconfig), system)

    def workspace():
        return get(local_cluster, "workspaces.tau.azure.com", name, "-n", system)

    assert reconciler.reconcile(system, name) == 0
    assert workspace()["metadata"]["finalizers"] == [keys.WORKSPACE_FINALIZER]
    assert keys.PRIMARY_WORKSPACE not in (workspace()["metadata"].get("annotations") or {})

    assert reconciler.reconcile(system, name) == 0
    assert workspace()["metadata"]["annotations"][keys.PRIMARY_WORKSPACE] == "true"
    assert get(local_cluster, "namespace", name) is None

    assert reconciler.reconcile(system, name) == REQUEUE_READY
    assert get(local_cluster, "namespace", name) is not None
    ready = workspace()
    assert ready["status"]["phase"] == "Ready"

    assert reconciler.reconcile(system, name) == REQUEUE_READY
    assert workspace()["metadata"]["resourceVersion"] == ready["metadata"]["resourceVersion"]

    local_cluster.kubectl("delete", "workspaces.tau.azure.com", name, "-n", system, "--wait=false")
    assert reconciler.reconcile(system, name) is None
    assert workspace() is None
    assert get(local_cluster, "namespace", name) is not None
    local_cluster.kubectl("delete", "namespace", name, "--wait=false")

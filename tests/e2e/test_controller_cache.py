"""The TauCluster's watch-fed inputs on the real API server: listed once, then kept current by
watches; they wake the reconciler for what a pass reads and stay quiet on node heartbeats."""

from __future__ import annotations

import json
import threading

from controller_harness import unique, wait_for

from tau import keys
from tau.controller.cache import ClusterInputs
from tau.controller.kubeapi import (
    LOCAL_QUEUES,
    MULTIKUEUE_CONFIGS,
    NODES,
    ControllerClient,
    NotFoundError,
)


class Wakes:
    def __init__(self) -> None:
        self.reasons: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, why: str) -> None:
        with self.lock:
            self.reasons.append(why)

    def about(self, name: str) -> list[str]:
        with self.lock:
            return [r for r in self.reasons if f" {name} " in f"{r} "]


def test_inputs_list_once_then_follow_watches_and_wake_only_for_what_a_pass_reads(
    local_cluster, namespace
):
    node = unique("kwok-cache")
    local_cluster.kubectl(
        "apply",
        "-f",
        "-",
        input=json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": node,
                    "labels": {"type": "kwok", keys.INSTANCE_TYPE_LABEL: "Standard_D4s_v5"},
                },
            }
        ),
    )
    client = ControllerClient(local_cluster.kubeconfig)
    wakes = Wakes()
    inputs = ClusterInputs(client, wakes)
    inputs.start()
    try:
        wait_for("every input type listed", inputs.synced, timeout=60)
        lists = {kind: n for kind, n in client.kinds.items() if kind[0] == "list"}
        assert ("list", "nodes") in lists
        assert node in [n["metadata"]["name"] for n in inputs.list(NODES)]
        assert inputs.get(MULTIKUEUE_CONFIGS, unique("absent")) is None

        # A LocalQueue in one namespace is found there only, though one watch covers all.
        local_cluster.kubectl(
            "apply",
            "-f",
            "-",
            input=json.dumps(
                {
                    "apiVersion": "kueue.x-k8s.io/v1beta2",
                    "kind": "LocalQueue",
                    "metadata": {"name": "jobqueue", "namespace": namespace},
                    "spec": {"clusterQueue": "jobqueue"},
                }
            ),
        )
        found = wait_for(
            "the LocalQueue in the cache", lambda: inputs.get(LOCAL_QUEUES, "jobqueue", namespace)
        )
        assert found["spec"]["clusterQueue"] == "jobqueue"
        assert inputs.get(LOCAL_QUEUES, "jobqueue", unique("elsewhere")) is None
        assert any(f"LocalQueue {namespace}/jobqueue" in r for r in wakes.reasons)

        # A status heartbeat (what the kubelet or KWOK writes every few minutes) changes no
        # label: the cache takes it, the reconciler is not woken.
        wait_for("the node in the cache", lambda: wakes.about(node))
        before = len(wakes.about(node))
        beat = client.patch(
            NODES,
            node,
            {"status": {"conditions": [{"type": "TauE2EHeartbeat", "status": "True"}]}},
            subresource="status",
            patch_type="strategic",  # merges by condition type, as the kubelet's do
        )

        def cached(version: str):
            meta = (inputs.get(NODES, node) or {}).get("metadata") or {}
            return meta.get("resourceVersion") == version

        # The cache holds a Node's metadata only (all a pass reads of it).
        wait_for("the heartbeat in the cache", lambda: cached(beat["metadata"]["resourceVersion"]))
        assert len(wakes.about(node)) == before
        assert "status" not in inputs.get(NODES, node)

        # The reconciler's own label patch, expected before it is sent, wakes nothing either;
        # every patch is counted like any other request, a failed one typed.
        own = {"tau.azure.com/e2e-own": "a"}
        patches_before = client.kinds[("patch", "nodes")]
        inputs.expect_labels({node: own})
        absent = unique("kwok-absent")
        outcome = dict(
            client.patch_each(NODES, [(node, {"metadata": {"labels": own}}), (absent, {})])
        )
        assert outcome[node] is None and isinstance(outcome[absent], NotFoundError)
        assert client.kinds[("patch", "nodes")] == patches_before + 2
        labelled = client.get(NODES, node)
        assert labelled["metadata"]["labels"]["tau.azure.com/e2e-own"] == "a"
        wait_for(
            "the own patch in the cache", lambda: cached(labelled["metadata"]["resourceVersion"])
        )
        assert len(wakes.about(node)) == before

        local_cluster.kubectl("label", "node", node, "tau.azure.com/e2e-pool=a")
        wait_for("a wake for the label", lambda: f"Node {node} relabelled" in wakes.about(node))
        local_cluster.kubectl("delete", "node", node)
        wait_for("a wake for the departure", lambda: f"Node {node} left" in wakes.about(node))
        assert inputs.get(NODES, node) is None

        # Everything after the first listing came through the watches.
        assert {kind: n for kind, n in client.kinds.items() if kind[0] == "list"} == lists
    finally:
        inputs.stop()
        local_cluster.kubectl("delete", "node", node, "--ignore-not-found")

"""TauCluster on the local control plane: KWOK nodes labelled by VM size, profiles resolved.

The label rules are the chart's own VM-size catalog (charts/.../values.yaml), the profile
resolves against the real Kueue objects of the local cluster, and `tau` reads the result
through `tau.profiles` exactly as a researcher's CLI would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import yaml
from controller_harness import CHART, Controller, condition, get, install, unique, wait_for

from tau import keys
from tau.cluster.topology import gpu_capacity
from tau.kube import KubeClient
from tau.profiles.live import export_profiles, read_profile_set
from tau.profiles.select import ProfileUnavailable
from tau.profiles.snapshot import load_snapshot

VM_SIZE = "Standard_NC40ads_H100_v5"  # in the catalog: nc-h100-v5 / h100-95gb
CATALOG = yaml.safe_load((CHART / "values.yaml").read_text())["tauCluster"]["nodeLabelRules"]


@pytest.fixture(scope="module")
def controller(local_cluster, tmp_path_factory) -> Iterator[Controller]:
    system = unique("tau-sys")
    install(local_cluster, system)
    previous = get(local_cluster, "clusters.tau.azure.com", "cluster")
    process = Controller(local_cluster, system, tmp_path_factory.mktemp("controller"))
    process.start()
    yield process
    process.stop()
    local_cluster.kubectl("delete", "clusters.tau.azure.com", "cluster", check=False)
    if previous:
        meta = previous["metadata"]
        previous["metadata"] = {
            "name": "cluster",
            "labels": meta.get("labels", {}),
            "annotations": meta.get("annotations", {}),
        }
        previous.pop("status", None)
        local_cluster.kubectl("apply", "-f", "-", input=json.dumps(previous))


@pytest.fixture(scope="module")
def h100_node(local_cluster) -> Iterator[str]:
    name = unique("kwok-e2e-h100")
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake"},
            "labels": {
                "type": "kwok",
                "kubernetes.io/hostname": name,
                keys.INSTANCE_TYPE_LABEL: VM_SIZE,
            },
        },
        "spec": {"taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]},
    }
    local_cluster.kubectl("apply", "-f", "-", input=json.dumps(node))
    yield name
    local_cluster.kubectl("delete", "node", name, "--wait=false", check=False)


def tau_cluster(mode: str, profile_namespace: str, extra_rules=()) -> str:
    return json.dumps(
        {
            "apiVersion": "tau.azure.com/v1alpha1",
            "kind": "TauCluster",
            "metadata": {"name": "cluster"},
            "spec": {
                "managementMode": mode,
                "nodes": {"labelRules": [*CATALOG, *extra_rules]},
                "workloadProfiles": [
                    {
                        "name": "e2e.training.1x",
                        "applicability": {"teams": ["research"], "namespaces": [profile_namespace]},
                        "gpusPerWorker": 1,
                        "workerCount": 1,
                        "mode": "fixed",
                        "placement": "independent",
                        "defaultLocalQueue": "jobqueue",
                        "priorities": {
                            "workloadPriorityClassName": "taugrid-default",
                            "podPriorityClassName": "taugrid-default",
                        },
                    }
                ],
            },
        }
    )


def current(cluster):
    obj = get(cluster, "clusters.tau.azure.com", "cluster")
    status = (obj or {}).get("status") or {}
    if status.get("observedGeneration") != obj["metadata"]["generation"]:
        return None
    return obj


def reconciled_with_jobqueue(cluster, namespace):
    """The Reconcile-mode TauCluster, Ready, its profile on the namespace's `jobqueue`."""
    local_queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "jobqueue", "namespace": namespace},
        "spec": {"clusterQueue": "jobqueue"},
    }
    cluster.kubectl("apply", "-f", "-", input=json.dumps(local_queue))
    cluster.kubectl("apply", "-f", "-", input=tau_cluster("Reconcile", namespace))

    def ready():
        obj = current(cluster)
        return obj if obj and obj["status"].get("phase") == "Ready" else None

    return wait_for("TauCluster Ready", ready, timeout=90)


def test_reconcile_mode_labels_nodes_and_publishes_ready_profiles(
    local_cluster, controller, h100_node, namespace, tmp_path
):
    obj = reconciled_with_jobqueue(local_cluster, namespace)
    labels = get(local_cluster, "node", h100_node)["metadata"]["labels"]
    assert labels[keys.KUEUE_GPU_SERIES] == "nc-h100-v5"
    assert labels[keys.GPU_CLASS] == "h100-95gb"
    assert labels[keys.INSTANCE_TYPE_LABEL] == VM_SIZE  # merge patch removed nothing
    assert obj["status"]["nodes"]["drifted"] == 0 and obj["status"]["nodes"]["observed"] >= 1
    assert condition(obj, "NodesReady") == ("True", "NodeLabelsReady")
    assert condition(obj, "ReconcilePaused") == ("False", "NodeReconciliationActive")
    assert condition(obj, "WorkloadProfilesReady") == ("True", "WorkloadProfilesReady")
    assert [c["type"] for c in obj["status"]["conditions"]][-1] == "Ready"
    [resolved] = obj["status"]["workloadProfiles"]["profiles"]
    assert resolved["localQueues"] == [
        {"namespace": namespace, "name": "jobqueue", "clusterQueue": "jobqueue"}
    ]
    assert resolved["clusterQueues"] == ["jobqueue"]

    client = KubeClient(local_cluster.kubeconfig)
    profiles = read_profile_set(client)
    chosen = profiles.select(namespace=namespace, team="research")
    assert chosen.stamps()[keys.TAU_CLUSTER_GENERATION] == str(obj["metadata"]["generation"])
    stranger = KubeClient(local_cluster.mint_kubeconfig(unique("stranger")))
    with pytest.raises(ProfileUnavailable, match="forbidden"):
        read_profile_set(stranger)
    snapshot = tmp_path / "profiles.snapshot.yaml"
    export_profiles(client, snapshot)
    assert load_snapshot(snapshot).profile_set_hash == profiles.profile_set_hash

    # A pass with nothing to change reads the watch-fed cache and writes nothing.
    version = obj["metadata"]["resourceVersion"]
    passes = controller.reconciles("cluster")
    sent = controller.api_requests()
    local_cluster.kubectl("label", "node", h100_node, f"e2e-touch={unique('t')}", "--overwrite")
    wait_for("another TauCluster pass", lambda: controller.reconciles("cluster") > passes)
    after = get(local_cluster, "clusters.tau.azure.com", "cluster")
    assert after["metadata"]["resourceVersion"] == version
    grown = {k for k, n in controller.api_requests().items() if n > sent.get(k, 0)}
    assert not {k for k in grown if k[0] == "list"}
    assert not {k for k in grown if k[1] in ("nodes", "clusters/status") and k[0] != "get"}


def test_a_removed_rule_label_is_put_back_by_a_node_patch(
    local_cluster, controller, h100_node, namespace
):
    reconciled_with_jobqueue(local_cluster, namespace)
    patches = controller.api_requests().get(("patch", "nodes"), 0)

    local_cluster.kubectl("label", "node", h100_node, f"{keys.GPU_CLASS}-")

    def restored():
        labels = get(local_cluster, "node", h100_node)["metadata"]["labels"]
        return labels.get(keys.GPU_CLASS) == "h100-95gb"

    wait_for("the gpu-class label put back", restored, timeout=30)
    assert controller.api_requests().get(("patch", "nodes"), 0) > patches


def test_validate_topology_without_flags_checks_the_queues_of_every_ready_profile(
    local_cluster, controller, namespace
):
    reconciled_with_jobqueue(local_cluster, namespace)

    done = subprocess.run(
        [sys.executable, "-m", "tau", "cluster", "validate", "topology", "-o", "json"],
        env={**os.environ, "KUBECONFIG": str(local_cluster.kubeconfig)},
        capture_output=True,
        text=True,
        timeout=120,
    )

    findings = json.loads(done.stdout)["findings"]
    assert {
        "level": "ok",
        "check": "profile e2e.training.1x",
        "message": "ClusterQueues jobqueue",
    } in findings
    queue = get(local_cluster, "clusterqueues.kueue.x-k8s.io", "jobqueue")
    checked = {f["check"].split()[1] for f in findings if f["check"].startswith("flavor ")}
    assert checked == set(gpu_capacity(queue))


def test_observe_mode_reports_drift_without_touching_nodes(
    local_cluster, controller, h100_node, namespace
):
    extra = {"match": {"vmSizes": [VM_SIZE]}, "labels": {"tau.azure.com/e2e-pool": "observe"}}
    local_cluster.kubectl("apply", "-f", "-", input=tau_cluster("Observe", namespace, [extra]))

    def drifted():
        obj = current(local_cluster)
        return obj if obj and condition(obj, "DriftDetected")[0] == "True" else None

    obj = wait_for("drift reported", drifted, timeout=60)
    assert obj["status"]["phase"] == "Pending"
    assert condition(obj, "ObserveOnly") == ("True", "ObserveMode")
    assert condition(obj, "NodesReady") == ("False", "NodeLabelDrift")
    labels = get(local_cluster, "node", h100_node)["metadata"]["labels"]
    assert "tau.azure.com/e2e-pool" not in labels

"""The local cluster's real node runs containers: pods get addresses, Services and cluster DNS
work, and a PVC of the node's storage class binds to a directory a pod can write.
"""

from __future__ import annotations

import json

import pytest
from real_node import enforce_restricted, shell_pod, wait_for_phase

from hack.localcluster import LocalCluster, wait_until
from hack.localcluster import fixtures as fx


@pytest.fixture
def restricted(local_cluster: LocalCluster, namespace: str) -> str:
    enforce_restricted(local_cluster, namespace)
    return namespace


def test_the_real_node_is_ready_tainted_labelled_and_in_the_queue(
    local_cluster: LocalCluster,
) -> None:
    node = local_cluster.get_json("node", fx.REAL_NODE)
    labels = node["metadata"]["labels"]
    assert {k: labels.get(k) for k in fx.REAL_NODE_SELECTOR} == fx.REAL_NODE_SELECTOR
    assert fx.REAL_NODE_TAINT in node["spec"]["taints"]
    assert fx.KWOK_NODE_ANNOTATION not in node["metadata"].get("annotations", {})
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready and ready[0]["status"] == "True"
    info = node["status"]["nodeInfo"]
    assert info["kubeletVersion"] == local_cluster.state.versions["kubernetes"]
    assert info["containerRuntimeVersion"].startswith("containerd://")
    queue = local_cluster.get_json(f"clusterqueue/{fx.CLUSTER_QUEUE}")
    flavors = [f["name"] for f in queue["spec"]["resourceGroups"][0]["flavors"]]
    assert flavors[-1] == fx.REAL_FLAVOR


def test_a_pod_runs_to_completion_and_its_stdout_is_in_kubectl_logs(
    local_cluster: LocalCluster, restricted: str
) -> None:
    pod = shell_pod(local_cluster, "hello", "echo hello from $(hostname) as $(id -u)")
    local_cluster.create([{**pod, "metadata": {**pod["metadata"], "namespace": restricted}}])

    assert wait_for_phase(local_cluster, restricted, "hello", {"Succeeded", "Failed"}) == (
        "Succeeded"
    )
    status = local_cluster.get_json("pod", "hello", "-n", restricted)
    assert status["spec"]["nodeName"] == fx.REAL_NODE
    assert status["status"]["podIP"], "the pod got no address from the CNI bridge"
    [container] = status["status"]["containerStatuses"]
    assert container["state"]["terminated"]["reason"] == "Completed"
    logs = local_cluster.kubectl("logs", "-n", restricted, "hello").stdout
    assert logs.strip() == "hello from hello as 65534"


def test_a_service_is_reached_by_its_cluster_dns_name(
    local_cluster: LocalCluster, restricted: str
) -> None:
    server = shell_pod(
        local_cluster,
        "web",
        "mkdir -p /tmp/www && echo served-by-web > /tmp/www/index.html && "
        "exec httpd -f -p 8080 -h /tmp/www",
        restart="Always",
    )
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": restricted},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }
    local_cluster.create([{**server, "metadata": {**server["metadata"], "namespace": restricted}}])
    local_cluster.create([service])
    wait_for_phase(local_cluster, restricted, "web", {"Running"})

    fqdn = f"web.{restricted}.svc.cluster.local"
    client = shell_pod(
        local_cluster,
        "client",
        # The first answer can race kube-proxy's rules for the new Service; a few tries.
        # (busybox-static's wget crashes in glibc's NSS; its nc resolves the short name fine.)
        f"for i in $(seq 20); do nslookup {fqdn} && printf 'GET / HTTP/1.0\\r\\n\\r\\n'"
        " | nc -w 3 web 80 | grep served-by && exit 0; sleep 1; done; exit 1",
    )
    local_cluster.create([{**client, "metadata": {**client["metadata"], "namespace": restricted}}])
    phase = wait_for_phase(local_cluster, restricted, "client", {"Succeeded", "Failed"})
    logs = local_cluster.kubectl("logs", "-n", restricted, "client").stdout
    assert phase == "Succeeded", logs
    cluster_ip = local_cluster.get_json("service", "web", "-n", restricted)["spec"]["clusterIP"]
    assert cluster_ip in logs  # nslookup's answer: the Service's ClusterIP, from CoreDNS
    assert "served-by-web" in logs


def test_a_pvc_of_the_node_storage_class_binds_and_keeps_what_a_pod_wrote(
    local_cluster: LocalCluster, restricted: str
) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": restricted},
        "spec": {
            "storageClassName": fx.STORAGE_CLASS,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "16Mi"}},
        },
    }
    local_cluster.create([claim])
    volume = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    mount = [{"name": "data", "mountPath": "/data"}]

    def run(name: str, script: str) -> str:
        pod = shell_pod(local_cluster, name, script, volumes=volume, mounts=mount)
        local_cluster.create([{**pod, "metadata": {**pod["metadata"], "namespace": restricted}}])
        phase = wait_for_phase(local_cluster, restricted, name, {"Succeeded", "Failed"}, 180)
        logs = local_cluster.kubectl("logs", "-n", restricted, name).stdout
        assert phase == "Succeeded", logs
        return logs

    run("writer", "echo checkpoint-1 > /data/state && echo wrote")
    bound = local_cluster.get_json("pvc", "data", "-n", restricted)
    assert bound["status"]["phase"] == "Bound"
    pv = local_cluster.get_json("pv", bound["spec"]["volumeName"])
    assert pv["spec"]["storageClassName"] == fx.STORAGE_CLASS
    terms = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert fx.REAL_NODE in json.dumps(terms)
    assert run("reader", "cat /data/state").strip() == "checkpoint-1"

    local_cluster.kubectl("delete", "pod", "writer", "reader", "-n", restricted)
    local_cluster.kubectl("delete", "pvc", "data", "-n", restricted)
    wait_until(
        "the released volume to be deleted by its provisioner",
        lambda: (
            local_cluster.kubectl("get", "pv", pv["metadata"]["name"], check=False).returncode != 0
        ),
        120,
    )

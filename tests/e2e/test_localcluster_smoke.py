"""The local control plane is a real Kubernetes cluster with real Kueue admission.

Each test drives the real processes through the apiserver, the way the tau CLI will.
"""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.localcluster import LocalCluster, wait_until
from hack.localcluster import fixtures as fx


def _local_queue(cluster: LocalCluster, namespace: str) -> str:
    cluster.apply(
        [
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "team", "namespace": namespace},
                "spec": {"clusterQueue": fx.CLUSTER_QUEUE},
            }
        ]
    )
    return "team"


def _job(
    name: str,
    queue: str,
    resources: dict[str, str],
    gpu_class: str | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "main",
                "image": "python:3.11",
                "command": ["python", "-c", "print('hello')"],
                "resources": {"requests": resources, "limits": resources},
            }
        ],
    }
    if fx.GPU_RESOURCE in resources:
        pod_spec["tolerations"] = [fx.GPU_TOLERATION]
    if gpu_class:
        pod_spec["nodeSelector"] = {fx.GPU_CLASS_LABEL: gpu_class}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {fx.KUEUE_QUEUE_LABEL: queue}},
        "spec": {
            "backoffLimit": 0,
            "template": {"metadata": {"annotations": annotations or {}}, "spec": pod_spec},
        },
    }


def _create(cluster: LocalCluster, namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
    out = cluster.kubectl("create", "-n", namespace, "-o", "json", "-f", "-", input=json.dumps(obj))
    return json.loads(out.stdout)


def _workload_of(cluster: LocalCluster, namespace: str, owner: str) -> dict[str, Any] | None:
    for workload in cluster.get_json("workloads.kueue.x-k8s.io", "-n", namespace)["items"]:
        if any(ref["name"] == owner for ref in workload["metadata"].get("ownerReferences", [])):
            return workload
    return None


def _condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in obj.get("status", {}).get("conditions", []) if c["type"] == kind), None)


def _pods(cluster: LocalCluster, namespace: str, selector: str) -> list[dict[str, Any]]:
    return cluster.get_json("pods", "-n", namespace, "-l", selector)["items"]


def test_apiserver_is_ready_and_serves_the_fake_gpu_nodes(local_cluster: LocalCluster) -> None:
    assert local_cluster.readyz()
    assert local_cluster.kubectl("get", "--raw", "/readyz").stdout == "ok"

    nodes = {n["metadata"]["name"]: n for n in local_cluster.get_json("nodes")["items"]}
    assert set(fx.GPU_NODES) | set(fx.CPU_NODES) <= set(nodes)
    for pool in fx.GPU_POOLS:
        for name in pool.node_names:
            node = nodes[name]
            assert node["status"]["allocatable"][fx.GPU_RESOURCE] == str(pool.gpus)
            assert node["metadata"]["labels"][fx.GPU_CLASS_LABEL] == pool.gpu_class
            assert node["metadata"]["labels"][fx.GPU_SERIES_LABEL] == pool.gpu_series
            assert fx.GPU_TAINT in node["spec"]["taints"]
            assert _condition(node, "Ready")["status"] == "True"


@pytest.mark.parametrize(
    ("resources", "gpu_class", "flavor"),
    [
        ({"cpu": "1", "memory": "1Gi"}, None, fx.CPU_FLAVOR),
        (
            {"cpu": "4", "memory": "16Gi", fx.GPU_RESOURCE: "2"},
            fx.GPU_CLASS_A100,
            fx.GPU_FLAVOR_A100,
        ),
    ],
    ids=["cpu", "gpu-a100"],
)
def test_a_queued_job_is_suspended_admitted_scheduled_on_its_flavor_and_completes(
    local_cluster: LocalCluster,
    namespace: str,
    resources: dict[str, str],
    gpu_class: str | None,
    flavor: str,
) -> None:
    queue = _local_queue(local_cluster, namespace)

    created = _create(local_cluster, namespace, _job("train", queue, resources, gpu_class))
    assert created["spec"]["suspend"] is True, "Kueue's mutating webhook did not suspend the Job"

    workload = wait_until(
        "the Job's Workload to be admitted",
        lambda: (
            (w := _workload_of(local_cluster, namespace, "train"))
            and (_condition(w, "Admitted") or {}).get("status") == "True"
            and w
        ),
    )
    admission = workload["status"]["admission"]
    assert admission["clusterQueue"] == fx.CLUSTER_QUEUE
    assigned = set(admission["podSetAssignments"][0]["flavors"].values())
    assert assigned == {flavor}

    job = wait_until(
        "the Job to complete",
        lambda: (
            (j := local_cluster.get_json("job/train", "-n", namespace))
            and (_condition(j, "Complete") or {}).get("status") == "True"
            and j
        ),
    )
    assert job["status"]["succeeded"] == 1
    (pod,) = _pods(local_cluster, namespace, "job-name=train")
    assert pod["spec"]["nodeName"] in fx.FLAVOR_POOLS[flavor].node_names
    assert pod["status"]["phase"] == "Succeeded"

    logs = local_cluster.kubectl("logs", "-n", namespace, pod["metadata"]["name"]).stdout
    assert fx.DEFAULT_POD_LOG_LINE in logs


def test_a_job_larger_than_the_cluster_queue_stays_pending_with_kueues_reason(
    local_cluster: LocalCluster, namespace: str
) -> None:
    queue = _local_queue(local_cluster, namespace)
    too_many = str(sum(pool.gpus * pool.count for pool in fx.GPU_POOLS) + 1)

    _create(local_cluster, namespace, _job("huge", queue, {"cpu": "1", fx.GPU_RESOURCE: too_many}))

    reserved = wait_until(
        "Kueue to explain why the Workload is not admitted",
        lambda: (
            (w := _workload_of(local_cluster, namespace, "huge")) and _condition(w, "QuotaReserved")
        ),
    )
    assert reserved["status"] == "False"
    assert reserved["reason"] == "Pending"
    assert "insufficient quota" in reserved["message"]
    assert local_cluster.get_json("job/huge", "-n", namespace)["spec"]["suspend"] is True
    assert _pods(local_cluster, namespace, "job-name=huge") == []


@pytest.mark.parametrize(
    ("outcome", "phase", "exit_code", "reason"),
    [
        (fx.OUTCOME_FAIL, "Failed", 1, "Error"),
        (fx.OUTCOME_OOMKILLED, "Failed", 137, "OOMKilled"),
        (fx.OUTCOME_EVICTED, "Failed", 137, "Error"),
        (fx.OUTCOME_PREEMPTED, "Failed", 137, "Error"),
    ],
)
def test_a_pod_annotation_selects_how_kwok_ends_the_pod(
    local_cluster: LocalCluster,
    namespace: str,
    outcome: str,
    phase: str,
    exit_code: int,
    reason: str,
) -> None:
    queue = _local_queue(local_cluster, namespace)
    job = _job("ends", queue, {"cpu": "100m"}, annotations={fx.POD_OUTCOME_ANNOTATION: outcome})
    _create(local_cluster, namespace, job)

    pod = wait_until(
        f"the pod to end as {outcome}",
        lambda: next(
            (
                p
                for p in _pods(local_cluster, namespace, "job-name=ends")
                if p["status"].get("phase") == phase
            ),
            None,
        ),
    )
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (exit_code, reason)
    wait_until(
        "the Job to fail",
        lambda: (
            (_condition(local_cluster.get_json("job/ends", "-n", namespace), "Failed") or {}).get(
                "status"
            )
            == "True"
        ),
    )


def _ray_pod(resources: dict[str, str], gpu_class: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "ray",
                "image": "rayproject/ray:2.41.0",
                "resources": {"requests": resources, "limits": resources},
            }
        ],
    }
    if gpu_class:
        spec["nodeSelector"] = {fx.GPU_CLASS_LABEL: gpu_class}
        spec["tolerations"] = [fx.GPU_TOLERATION]
    return {"spec": spec}


def _rayjob(
    name: str,
    queue: str,
    head: dict[str, Any],
    workers: int = 0,
    worker: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    cluster_spec: dict[str, Any] = {
        "rayVersion": "2.41.0",
        "headGroupSpec": {"rayStartParams": {}, "template": head},
    }
    if workers:
        cluster_spec["workerGroupSpecs"] = [
            {
                "groupName": "workers",
                "replicas": workers,
                "minReplicas": workers,
                "maxReplicas": workers,
                "rayStartParams": {},
                "template": worker or head,
            }
        ]
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {
            "name": name,
            "labels": {fx.KUEUE_QUEUE_LABEL: queue},
            "annotations": annotations or {},
        },
        "spec": {
            "entrypoint": "python -c 'print(1)'",
            # Kueue's validating webhook requires it for the RayJobs it manages.
            "shutdownAfterJobFinishes": True,
            "rayClusterSpec": cluster_spec,
        },
    }


def test_a_rayjob_is_admitted_and_its_cluster_pods_land_on_gpu_nodes(
    local_cluster: LocalCluster, namespace: str
) -> None:
    queue = _local_queue(local_cluster, namespace)
    gpu_pod = _ray_pod({"cpu": "2", "memory": "8Gi", fx.GPU_RESOURCE: "1"}, fx.GPU_CLASS_H200)
    # Kept running, so its cluster is still there to inspect.
    rayjob = _rayjob(
        "tune",
        queue,
        gpu_pod,
        workers=2,
        annotations={fx.POD_OUTCOME_ANNOTATION: fx.OUTCOME_RUN_FOREVER},
    )

    created = _create(local_cluster, namespace, rayjob)
    assert created["spec"]["suspend"] is True, "Kueue's RayJob webhook did not suspend it"

    workload = wait_until(
        "the RayJob's Workload to be admitted",
        lambda: (
            (w := _workload_of(local_cluster, namespace, "tune"))
            and (_condition(w, "Admitted") or {}).get("status") == "True"
            and w
        ),
    )
    assert workload["status"]["admission"]["clusterQueue"] == fx.CLUSTER_QUEUE
    flavors = {
        ps["name"]: set(ps["flavors"].values())
        for ps in workload["status"]["admission"]["podSetAssignments"]
    }
    assert flavors["head"] == flavors["workers"] == {fx.GPU_FLAVOR_H200}

    pods = wait_until(
        "the RayCluster's head and 2 workers to run",
        lambda: (
            (
                ps := [
                    p
                    for p in _pods(local_cluster, namespace, "ray.io/cluster")
                    if p["status"].get("phase") == "Running"
                ]
            )
            and len(ps) == 3
            and ps
        ),
        timeout=120,
    )
    assert {p["metadata"]["labels"]["ray.io/node-type"] for p in pods} == {"head", "worker"}
    assert {p["spec"]["nodeName"] for p in pods} <= set(fx.H200_POOL.node_names)


@pytest.mark.parametrize(
    ("annotations", "job_status", "deployment_status"),
    [
        ({}, "SUCCEEDED", "Complete"),
        ({fx.POD_OUTCOME_ANNOTATION: fx.OUTCOME_FAIL}, "FAILED", "Failed"),
    ],
    ids=["succeeds", "fails"],
)
def test_kuberay_ends_a_rayjob_as_its_fake_dashboard_reports_and_kueue_finishes_it(
    local_cluster: LocalCluster,
    namespace: str,
    annotations: dict[str, str],
    job_status: str,
    deployment_status: str,
) -> None:
    queue = _local_queue(local_cluster, namespace)
    _create(
        local_cluster,
        namespace,
        _rayjob("short", queue, _ray_pod({"cpu": "1"}), annotations=annotations),
    )

    status = wait_until(
        "KubeRay to end the RayJob",
        lambda: (
            (st := local_cluster.get_json("rayjob/short", "-n", namespace).get("status"))
            and st.get("jobDeploymentStatus") in ("Complete", "Failed")
            and st
        ),
        timeout=120,
    )
    assert (status["jobStatus"], status["jobDeploymentStatus"]) == (job_status, deployment_status)
    wait_until(
        "Kueue to mark the Workload finished",
        lambda: (
            (w := _workload_of(local_cluster, namespace, "short"))
            and (_condition(w, "Finished") or {}).get("status") == "True"
        ),
    )


def _status_as(kubeconfig: Path, url: str) -> int:
    """The HTTP status the apiserver answers to a request authenticated by the kubeconfig."""
    user = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]
    cluster = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for key in ("client-certificate-data", "client-key-data"):
            paths[key] = Path(tmp) / key
            paths[key].write_bytes(base64.b64decode(user[key]))
        context = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
        context.load_cert_chain(paths["client-certificate-data"], paths["client-key-data"])
        try:
            with urllib.request.urlopen(url, context=context, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code


def test_rbac_forbids_a_non_admin_identity_outside_its_grants(
    local_cluster: LocalCluster, namespace: str
) -> None:
    researcher = local_cluster.mint_kubeconfig("alice@example.com", ["tau:researchers"])
    local_cluster.kubectl(
        "create", "role", "pod-reader", "-n", namespace, "--verb=get,list,watch", "--resource=pods"
    )
    local_cluster.kubectl(
        "create",
        "rolebinding",
        "alice-reads-pods",
        "-n",
        namespace,
        "--role=pod-reader",
        "--user=alice@example.com",
    )

    server = local_cluster.server
    # Bindings are cached by the authorizer: wait for the grant to be visible.
    wait_until(
        "alice's grant to take effect",
        lambda: _status_as(researcher, f"{server}/api/v1/namespaces/{namespace}/pods") == 200,
    )
    assert _status_as(researcher, f"{server}/api/v1/namespaces/kube-system/pods") == 403
    assert _status_as(researcher, f"{server}/api/v1/nodes") == 403
    denied = local_cluster.kubectl(
        "create", "namespace", "alice-was-here", kubeconfig=researcher, check=False
    )
    assert denied.returncode != 0 and "Forbidden" in denied.stderr


def test_a_restricted_namespace_rejects_a_privileged_pod(
    local_cluster: LocalCluster, namespace: str
) -> None:
    local_cluster.kubectl(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    privileged = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "root"},
        "spec": {
            "containers": [
                {"name": "main", "image": "busybox", "securityContext": {"privileged": True}}
            ]
        },
    }

    rejected = local_cluster.kubectl(
        "create", "-n", namespace, "-f", "-", input=json.dumps(privileged), check=False
    )

    assert rejected.returncode != 0
    assert "violates PodSecurity" in rejected.stderr
    assert 'privileged (container "main" must not set securityContext.privileged=true)' in (
        rejected.stderr
    )

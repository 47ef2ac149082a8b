"""Names of the baseline objects every local cluster starts with, and the KWOK knobs.

Tests import these instead of repeating string literals, so the baseline can change in one place.
The objects mirror an AKS cluster with the TauGrid baseline queue installed: a CPU pool, H200 and
A100 GPU pools labelled by the node label rule catalog, one ResourceFlavor per pool, and the
ClusterQueue ``jobqueue``. No LocalQueue exists: each test creates its own in its own namespace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# --- node labels and taints (the AKS GPU node label rule catalog) ---------------------------
GPU_CLASS_LABEL = "tau.azure.com/gpu-class"
GPU_SERIES_LABEL = "kueue.azure.com/gpu-series"
GPU_RESOURCE = "nvidia.com/gpu"
AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
GPU_TAINT_KEY = "sku"
GPU_TAINT_VALUE = "gpu"
GPU_TAINT_EFFECT = "NoSchedule"
GPU_TAINT: dict[str, str] = {
    "key": GPU_TAINT_KEY,
    "value": GPU_TAINT_VALUE,
    "effect": GPU_TAINT_EFFECT,
}
# What a pod needs to land on a GPU node; Kueue's GPU flavors do not add it for you.
GPU_TOLERATION: dict[str, str] = {
    "key": GPU_TAINT_KEY,
    "operator": "Equal",
    "value": GPU_TAINT_VALUE,
    "effect": GPU_TAINT_EFFECT,
}

GPU_CLASS_H200 = "h200-141gb"
GPU_CLASS_A100 = "a100-80gb"

# --- the real node: a kubelet running containers, beside the fake nodes -----------------------
# Tainted, so nothing lands there by accident (KWOK outcomes stay KWOK's); the Kueue flavor
# REAL_FLAVOR adds the toleration, and a pod (or a tau target's policy.node_selector) picks it
# with REAL_NODE_SELECTOR.
REAL_POOL_NAME = "real"
REAL_NODE = "real-cpu-0"
REAL_NODE_TAINT_KEY = "tau.azure.com/real-node"
REAL_NODE_TAINT: dict[str, str] = {
    "key": REAL_NODE_TAINT_KEY,
    "value": "true",
    "effect": "NoSchedule",
}
REAL_NODE_TOLERATION: dict[str, str] = {
    "key": REAL_NODE_TAINT_KEY,
    "operator": "Equal",
    "value": "true",
    "effect": "NoSchedule",
}
REAL_NODE_SELECTOR: dict[str, str] = {AGENTPOOL_LABEL: REAL_POOL_NAME}
REAL_NODE_LABELS: dict[str, str] = {
    "type": "real",
    AGENTPOOL_LABEL: REAL_POOL_NAME,
    "agentpool": REAL_POOL_NAME,
}
# Workload PVCs on the real node: local-path-provisioner, volumes under the cluster's state dir.
STORAGE_CLASS = "taugrid-local-path"
LOCAL_PATH_PROVISIONER = "rancher.io/local-path"
# The images every real pod can use without pushing anything: busybox (sh, nslookup, nc, wget),
# running as nobody. LocalCluster.images maps these names to references in the cluster registry.
SHELL_IMAGE = "shell"

# --- KWOK: which nodes it fakes, and how pods end -------------------------------------------
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
KWOK_NODE_ANNOTATION_VALUE = "fake"

# Pod annotation choosing how a pod ends. Job-owned pods succeed by default; other pods (Ray
# heads and workers, bare pods) keep running unless this annotation says otherwise. On a RayJob
# the same annotation (succeed, fail, run-forever) and the run duration below choose what the
# fake Ray dashboard reports.
POD_OUTCOME_ANNOTATION = "kwok.tau.azure.com/outcome"
OUTCOME_SUCCEED = "succeed"  # phase Succeeded, exit code 0
OUTCOME_FAIL = "fail"  # phase Failed, container exit code 1 (reason Error)
OUTCOME_OOMKILLED = "oomkilled"  # phase Failed, exit code 137, reason OOMKilled
OUTCOME_EVICTED = "evicted"  # phase Failed, reason Evicted, DisruptionTarget TerminationByKubelet
OUTCOME_PREEMPTED = "preempted"  # phase Failed, DisruptionTarget PreemptionByScheduler
OUTCOME_RUN_FOREVER = "run-forever"  # stays Running, even when owned by a Job
POD_OUTCOMES = (
    OUTCOME_SUCCEED,
    OUTCOME_FAIL,
    OUTCOME_OOMKILLED,
    OUTCOME_EVICTED,
    OUTCOME_PREEMPTED,
    OUTCOME_RUN_FOREVER,
)
# Pod annotation: how long the pod stays Running before its outcome, e.g. "30s" (default "1s").
POD_RUN_DURATION_ANNOTATION = "kwok.tau.azure.com/run-duration"
DEFAULT_RUN_DURATION = "1s"

# Every container of every pod serves this text through `kubectl logs` unless a KWOK `Logs`
# object (kwok.x-k8s.io/v1alpha1, named after the pod, in its namespace) points elsewhere.
DEFAULT_POD_LOG_LINE = "kwok: fake container output"

# --- Kueue baseline ----------------------------------------------------------------------------
CLUSTER_QUEUE = "jobqueue"
CPU_FLAVOR = "taugrid-default-cpu"
GPU_FLAVOR_H200 = f"taugrid-gpu-{GPU_CLASS_H200}"
GPU_FLAVOR_A100 = f"taugrid-gpu-{GPU_CLASS_A100}"
# Last in the ClusterQueue, with the node's two cores as quota: a workload lands there when it
# selects the real pool, or when the fake CPU pool's quota is used up and it still fits here.
REAL_FLAVOR = "taugrid-real-cpu"
# A ClusterQueue with only the real node, through its own flavor naming the Topology (multi-node
# profiles ask Kueue for topology-aware placement): what a platform operator points a workload
# profile's LocalQueue at to run there (tau profiles place by queue, not by node selector). A
# topology flavor stays out of `jobqueue`: there Kueue would make every workload topology-aware
# and only that flavor would fit, so KWOK-bound workloads would land on the real node.
REAL_CLUSTER_QUEUE = "realqueue"
REAL_TOPOLOGY_FLAVOR = "taugrid-real-cpu-topology"
REAL_FLAVOR_QUOTA = {"cpu": "2", "memory": "4Gi"}
TOPOLOGY = "default-node-topology"
PRIORITY_DEFAULT = "taugrid-default"  # PriorityClass and WorkloadPriorityClass, value 1000
PRIORITY_HIGH = "taugrid-priority"  # PriorityClass and WorkloadPriorityClass, value 1200
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_NAMESPACE = "kueue-system"


@dataclass(frozen=True)
class NodePool:
    """One AKS-like agent pool of identical fake nodes."""

    name: str
    count: int
    instance_type: str
    cpu: str
    memory: str
    gpus: int = 0
    gpu_class: str | None = None
    gpu_series: str | None = None
    gpu_product: str | None = None
    extra_labels: dict[str, str] = field(default_factory=dict)

    @property
    def node_names(self) -> list[str]:
        return [f"kwok-{self.name}-{i}" for i in range(self.count)]

    @property
    def labels(self) -> dict[str, str]:
        labels = {
            "type": "kwok",
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            AGENTPOOL_LABEL: self.name,
            "agentpool": self.name,
            INSTANCE_TYPE_LABEL: self.instance_type,
            **self.extra_labels,
        }
        if self.gpus:
            assert self.gpu_class and self.gpu_series and self.gpu_product
            labels |= {
                GPU_CLASS_LABEL: self.gpu_class,
                GPU_SERIES_LABEL: self.gpu_series,
                "nvidia.com/gpu.product": self.gpu_product,
                "nvidia.com/gpu.present": "true",
                "kubernetes.azure.com/accelerator": "nvidia",
            }
        return labels

    @property
    def allocatable(self) -> dict[str, str]:
        resources = {"cpu": self.cpu, "memory": self.memory, "pods": "110"}
        if self.gpus:
            resources[GPU_RESOURCE] = str(self.gpus)
        return resources


CPU_POOL = NodePool("cpu", 2, "Standard_D16ds_v5", cpu="16", memory="64Gi")
H200_POOL = NodePool(
    "h200",
    2,
    "Standard_ND96isr_H200_v5",
    cpu="96",
    memory="1800Gi",
    gpus=8,
    gpu_class=GPU_CLASS_H200,
    gpu_series="nd-h200-v5",
    gpu_product="NVIDIA-H200",
)
A100_POOL = NodePool(
    "a100",
    1,
    "Standard_NC96ads_A100_v4",
    cpu="96",
    memory="880Gi",
    gpus=4,
    gpu_class=GPU_CLASS_A100,
    gpu_series="nc-a100-v4",
    gpu_product="NVIDIA-A100-PCIE-80GB",
)
NODE_POOLS = (CPU_POOL, H200_POOL, A100_POOL)
GPU_POOLS = (H200_POOL, A100_POOL)
CPU_NODES = CPU_POOL.node_names
GPU_NODES = H200_POOL.node_names + A100_POOL.node_names
# ResourceFlavor name -> the pool whose nodes it selects.
FLAVOR_POOLS = {CPU_FLAVOR: CPU_POOL, GPU_FLAVOR_H200: H200_POOL, GPU_FLAVOR_A100: A100_POOL}


def _quantity_sum(quantity: str, count: int) -> str:
    """Multiply a plain or binary-suffixed quantity, so quotas equal the pool's capacity."""
    for suffix in ("Ki", "Mi", "Gi", "Ti"):
        if quantity.endswith(suffix):
            return f"{int(quantity.removesuffix(suffix)) * count}{suffix}"
    return str(int(quantity) * count)


def node_objects() -> list[dict[str, Any]]:
    """Fake Node objects; KWOK keeps the allocatable given here and reports them Ready."""
    nodes = []
    for pool in NODE_POOLS:
        for name in pool.node_names:
            nodes.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": name,
                        "annotations": {
                            KWOK_NODE_ANNOTATION: KWOK_NODE_ANNOTATION_VALUE,
                            "node.alpha.kubernetes.io/ttl": "0",
                        },
                        "labels": {**pool.labels, "kubernetes.io/hostname": name},
                    },
                    "spec": {"taints": [GPU_TAINT]} if pool.gpus else {},
                    "status": {"allocatable": pool.allocatable, "capacity": pool.allocatable},
                }
            )
    return nodes


def kueue_objects() -> list[dict[str, Any]]:
    """The baseline queue: flavors per pool, ClusterQueue `jobqueue`, Topology, priorities.

    Quotas equal the fake pools' capacity, so anything Kueue admits can also be scheduled.
    """
    api = "kueue.x-k8s.io/v1beta2"
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": api,
            "kind": "Topology",
            "metadata": {"name": TOPOLOGY},
            "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]},
        }
    ]
    flavor_quotas = []
    for flavor, pool in FLAVOR_POOLS.items():
        spec: dict[str, Any] = {"nodeLabels": {AGENTPOOL_LABEL: pool.name}}
        if pool.gpus:
            spec["nodeLabels"][GPU_CLASS_LABEL] = pool.gpu_class
            spec["nodeTaints"] = [GPU_TAINT]
        objects.append(
            {
                "apiVersion": api,
                "kind": "ResourceFlavor",
                "metadata": {"name": flavor},
                "spec": spec,
            }
        )
        flavor_quotas.append(
            {
                "name": flavor,
                "resources": [
                    {"name": "cpu", "nominalQuota": _quantity_sum(pool.cpu, pool.count)},
                    {"name": "memory", "nominalQuota": _quantity_sum(pool.memory, pool.count)},
                    {"name": GPU_RESOURCE, "nominalQuota": str(pool.gpus * pool.count)},
                ],
            }
        )
    real = {"nodeLabels": dict(REAL_NODE_SELECTOR), "tolerations": [REAL_NODE_TOLERATION]}
    real_quota = [
        {"name": "cpu", "nominalQuota": REAL_FLAVOR_QUOTA["cpu"]},
        {"name": "memory", "nominalQuota": REAL_FLAVOR_QUOTA["memory"]},
        {"name": GPU_RESOURCE, "nominalQuota": "0"},
    ]
    for name, spec in (
        (REAL_FLAVOR, real),
        (REAL_TOPOLOGY_FLAVOR, {**real, "topologyName": TOPOLOGY}),
    ):
        objects.append(
            {"apiVersion": api, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}
        )
    flavor_quotas.append({"name": REAL_FLAVOR, "resources": real_quota})
    objects.append(
        {
            "apiVersion": api,
            "kind": "ClusterQueue",
            "metadata": {"name": CLUSTER_QUEUE},
            "spec": {
                "namespaceSelector": {},
                "queueingStrategy": "BestEffortFIFO",
                "preemption": {"withinClusterQueue": "LowerPriority"},
                "resourceGroups": [
                    {"coveredResources": ["cpu", "memory", GPU_RESOURCE], "flavors": flavor_quotas}
                ],
            },
        }
    )
    objects.append(
        {
            "apiVersion": api,
            "kind": "ClusterQueue",
            "metadata": {"name": REAL_CLUSTER_QUEUE},
            "spec": {
                "namespaceSelector": {},
                "queueingStrategy": "BestEffortFIFO",
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu", "memory", GPU_RESOURCE],
                        "flavors": [{"name": REAL_TOPOLOGY_FLAVOR, "resources": real_quota}],
                    }
                ],
            },
        }
    )
    for name, value in ((PRIORITY_DEFAULT, 1000), (PRIORITY_HIGH, 1200)):
        objects.append(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "globalDefault": False,
                "preemptionPolicy": "PreemptLowerPriority",
            }
        )
        objects.append(
            {
                "apiVersion": api,
                "kind": "WorkloadPriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
        )
    return objects

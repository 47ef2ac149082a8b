"""`tau cluster validate topology`: do a ClusterQueue's GPU flavors land on real GPU nodes?

Without a flag it checks the ClusterQueues of every workload profile Ready at the TauCluster's
current generation (the queues researchers' runs resolve to); `--profile` narrows that to one
profile and `--cluster-queue` checks one queue by name. For each flavor of a queue: the
ResourceFlavor exists, its nodeLabels select nodes, those nodes expose the GPU resource (device
plugin or DRA), carry a zone, and InfiniBand-class pools are Ready and schedulable.
`evaluate_flavor` is pure; `validate` reads the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau import keys
from tau.cluster.probe import _looks_like_gpu, _quantity_int
from tau.errors import RuntimeFailure, UsageError
from tau.kube import KubeClient, KubeError
from tau.kube.resources import (
    CLUSTER_QUEUES,
    NODES,
    RESOURCE_FLAVORS,
    RESOURCE_SLICES,
    TAU_CLUSTERS,
)
from tau.profiles.select import PLATFORM, ready_at

GPU_RESOURCES = (keys.DRA_NVIDIA_GPU, keys.NVIDIA_GPU)
DRA_RESOURCE = keys.DRA_NVIDIA_GPU
IB_INSTANCE_TYPES = {
    "Standard_ND96isr_H200_v5": "H200",
    "Standard_ND96isr_H100_v5": "H100",
    "Standard_ND96amsr_A100_v4": "A100",
    "Standard_ND96isr_GB200_v6": "GB200",
}
GPU_LABELS = (keys.KUEUE_GPU_SERIES, keys.TAU_GPU_SERIES, keys.NVIDIA_GPU_PRODUCT)
OK, WARN, ERROR = "ok", "warn", "error"


@dataclass(frozen=True)
class Finding:
    level: str
    label: str
    message: str

    def line(self) -> str:
        return f"  {self.level} {self.label}: {self.message}"


def _positive(quantity: Any) -> bool:
    text = str(quantity if quantity is not None else "0").strip()
    digits = "".join(ch for ch in text if ch.isdigit() or ch == ".")
    try:
        return float(digits or "0") > 0
    except ValueError:
        return False


def gpu_capacity(cluster_queue: dict[str, Any]) -> dict[str, list[str]]:
    """Flavor name -> GPU resources it can admit (nominal quota, borrowing or a cohort)."""
    spec = cluster_queue.get("spec") or {}
    cohort = spec.get("cohort") or spec.get("cohortName")
    flavors: dict[str, list[str]] = {}
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            resources = flavors.setdefault(flavor.get("name", ""), [])
            for res in flavor.get("resources") or []:
                if res.get("name") not in GPU_RESOURCES:
                    continue
                borrowing = res.get("borrowingLimit")
                if (
                    _positive(res.get("nominalQuota"))
                    or _positive(borrowing)
                    or (borrowing is None and cohort)
                ):
                    resources.append(res["name"])
    return flavors


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _has_taints(node: dict[str, Any], taints: list[dict[str, Any]]) -> bool:
    have = {
        (t.get("key"), t.get("value"), t.get("effect"))
        for t in (node.get("spec") or {}).get("taints") or []
    }
    return bool(taints) and all(
        (t.get("key"), t.get("value"), t.get("effect")) in have for t in taints
    )


def _ready_schedulable(node: dict[str, Any]) -> bool:
    conditions = {
        c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or []
    }
    return conditions.get("Ready") == "True" and not (node.get("spec") or {}).get("unschedulable")


def evaluate_flavor(
    flavor_name: str,
    resources: list[str],
    flavor: dict[str, Any] | None,
    nodes: list[dict[str, Any]],
    slices: list[dict[str, Any]],
) -> list[Finding]:
    label = f"flavor {flavor_name}"
    if flavor is None:
        return [Finding(ERROR, label, "ResourceFlavor not found")]
    if not resources:
        return [Finding(OK, label, "no GPU quota; GPU checks skipped")]
    spec = flavor.get("spec") or {}
    node_labels = spec.get("nodeLabels") or {}
    if not nodes:
        return [Finding(ERROR, label, f"0 nodes match nodeLabels {_selector(node_labels) or '{}'}")]
    dra_nodes = {(s.get("spec") or {}).get("nodeName") for s in slices}
    flavor_looks_gpu = _looks_like_gpu(node_labels) or any(k in node_labels for k in GPU_LABELS)

    def gpu_capable(node: dict[str, Any]) -> bool:
        alloc = (node.get("status") or {}).get("allocatable") or {}
        name = (node.get("metadata") or {}).get("name")
        return (
            any(_quantity_int(alloc.get(r)) > 0 for r in GPU_RESOURCES)
            or name in dra_nodes
            or flavor_looks_gpu
            or _has_taints(node, spec.get("nodeTaints") or [])
            or _looks_like_gpu((node.get("metadata") or {}).get("labels") or {})
        )

    selected = [n for n in nodes if gpu_capable(n)]
    if not selected:
        return [Finding(ERROR, label, f"none of {len(nodes)} matching nodes looks GPU-capable")]
    findings = [Finding(OK, label, f"{len(selected)} GPU node(s) match")]
    for resource in resources:
        if resource == DRA_RESOURCE:
            check, have = (
                "gpu-resourceslices",
                [n for n in selected if n["metadata"]["name"] in dra_nodes],
            )
        else:
            check = "gpu-allocatable"
            have = [
                n
                for n in selected
                if _quantity_int(((n.get("status") or {}).get("allocatable") or {}).get(resource))
                > 0
            ]
        level = OK if len(have) == len(selected) else (WARN if have else ERROR)
        findings.append(
            Finding(
                level, f"{label} {check}", f"{len(have)}/{len(selected)} nodes expose {resource}"
            )
        )
    zoned = [
        n for n in selected if ((n.get("metadata") or {}).get("labels") or {}).get(keys.ZONE_LABEL)
    ]
    findings.append(
        Finding(
            OK if len(zoned) == len(selected) else WARN,
            f"{label} topology-zone",
            f"{len(zoned)}/{len(selected)} nodes carry topology.kubernetes.io/zone",
        )
    )
    instance = node_labels.get(keys.INSTANCE_TYPE_LABEL, "")
    if instance in IB_INSTANCE_TYPES:
        ready = [n for n in selected if _ready_schedulable(n)]
        findings.append(
            Finding(
                OK if len(ready) == len(selected) else WARN,
                f"{label} ib-capable",
                f"{IB_INSTANCE_TYPES[instance]} InfiniBand pool: {len(ready)}/{len(selected)} "
                "nodes Ready and schedulable",
            )
        )
    return findings


def profile_queues(tau_cluster: dict[str, Any], profile: str) -> list[str]:
    """ClusterQueues a ready workload profile resolved to (from TauCluster status)."""
    profiles = ((tau_cluster.get("status") or {}).get("workloadProfiles") or {}).get(
        "profiles"
    ) or []
    for item in profiles:
        if item.get("name") == profile:
            queues = item.get("clusterQueues") or []
            if not queues:
                raise UsageError(f"--profile {profile}: the profile resolved no ClusterQueue yet")
            return list(queues)
    raise UsageError(f"--profile {profile}: no such workload profile in TauCluster status")


def ready_profiles(tau_cluster: dict[str, Any] | None) -> dict[str, list[str]]:
    """Each profile Ready at the TauCluster's current generation, and the queues it resolved to."""
    if tau_cluster is None:
        raise RuntimeFailure(
            "no TauCluster cluster, so no workload profile to check",
            hint="pass --cluster-queue NAME to check one ClusterQueue",
            owner=PLATFORM,
        )
    generation = (tau_cluster.get("metadata") or {}).get("generation")
    status = (tau_cluster.get("status") or {}).get("workloadProfiles") or {}
    if not isinstance(generation, int) or status.get("observedGeneration") != generation:
        raise RuntimeFailure(
            f"TauCluster cluster has not published its workload profiles for generation"
            f" {generation} yet (observed {status.get('observedGeneration')})",
            hint="wait for the controller to reconcile, or pass --cluster-queue NAME",
            owner=PLATFORM,
        )
    ready = {
        item["name"]: list(item.get("clusterQueues") or [])
        for item in status.get("profiles") or []
        if item.get("name") and ready_at(item, generation)[0]
    }
    if not ready:
        raise RuntimeFailure(
            f"TauCluster cluster has no workload profile Ready at generation {generation}",
            hint="see `kubectl get clusters.tau.azure.com cluster -o yaml`, or pass"
            " --cluster-queue NAME",
            owner=PLATFORM,
        )
    return ready


def validate(client: KubeClient, cluster_queue: str = "", profile: str = "") -> list[Finding]:
    findings: list[Finding] = []
    if profile:
        queues = profile_queues(client.get(TAU_CLUSTERS, "cluster"), profile)
    elif cluster_queue:
        queues = [cluster_queue]
    else:
        queues = []
        for name, resolved in ready_profiles(client.get_or_none(TAU_CLUSTERS, "cluster")).items():
            if not resolved:
                findings.append(Finding(ERROR, f"profile {name}", "resolved no ClusterQueue"))
                continue
            findings.append(Finding(OK, f"profile {name}", f"ClusterQueues {', '.join(resolved)}"))
            queues += [queue for queue in resolved if queue not in queues]
    try:
        slices = client.list(RESOURCE_SLICES)
    except KubeError:
        slices = []
    for queue_name in queues:
        queue = client.get_or_none(CLUSTER_QUEUES, queue_name)
        if queue is None:
            findings.append(Finding(ERROR, f"clusterqueue {queue_name}", "not found"))
            continue
        capacity = gpu_capacity(queue)
        if not capacity:
            findings.append(Finding(ERROR, f"clusterqueue {queue_name}", "has no flavors"))
            continue
        for flavor_name, resources in capacity.items():
            flavor = client.get_or_none(RESOURCE_FLAVORS, flavor_name)
            node_labels = ((flavor or {}).get("spec") or {}).get("nodeLabels") or {}
            nodes = client.list(NODES, label_selector=_selector(node_labels)) if flavor else []
            findings += evaluate_flavor(flavor_name, resources, flavor, nodes, slices)
    return findings


def summary(findings: list[Finding]) -> str:
    counts = {level: sum(f.level == level for f in findings) for level in (OK, WARN, ERROR)}
    return f"summary: {counts[OK]} passed, {counts[WARN]} warnings, {counts[ERROR]} errors"

"""A dictionary of Kubernetes objects standing in for the API server's read side.

Profile resolution is a pure function of what it can read; tests hand it this instead of a
live cluster (the end-to-end suite runs the same code against a real one).
"""

from __future__ import annotations

from typing import Any

from tau.controller import kubeapi as k


class DictWorld:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.reads = 0

    def add(self, resource: k.Resource, obj: dict[str, Any]) -> DictWorld:
        meta = obj["metadata"]
        self.objects[(resource.plural, meta.get("namespace", ""), meta["name"])] = obj
        return self

    def get(self, resource: k.Resource, name: str, namespace: str = "") -> dict[str, Any] | None:
        self.reads += 1
        return self.objects.get((resource.plural, namespace, name))

    def list(self, resource: k.Resource) -> list[dict[str, Any]]:
        self.reads += 1
        return [
            o for (plural, _, _), o in sorted(self.objects.items()) if plural == resource.plural
        ]


def active(status: str = "True") -> dict[str, Any]:
    return {"conditions": [{"type": "Active", "status": status, "reason": "R", "message": ""}]}


def kueue_world(*, checks: list[str] | None = None, namespaces=("team-a",)) -> DictWorld:
    """The baseline queue: LocalQueue jobqueue per namespace → ClusterQueue jobqueue → flavors."""
    world = DictWorld()
    for ns in namespaces:
        world.add(
            k.LOCAL_QUEUES,
            {
                "metadata": {"name": "jobqueue", "namespace": ns},
                "spec": {"clusterQueue": "jobqueue"},
            },
        )
    cq_spec: dict[str, Any] = {
        "resourceGroups": [{"flavors": [{"name": "cpu"}, {"name": "gpu-h200"}]}]
    }
    if checks:
        cq_spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
    world.add(
        k.CLUSTER_QUEUES, {"metadata": {"name": "jobqueue"}, "spec": cq_spec, "status": active()}
    )
    world.add(k.RESOURCE_FLAVORS, {"metadata": {"name": "cpu"}, "spec": {}})
    world.add(
        k.RESOURCE_FLAVORS,
        {
            "metadata": {"name": "gpu-h200"},
            "spec": {
                "topologyName": "default-node-topology",
                "nodeLabels": {"tau.azure.com/gpu-class": "h200-141gb"},
            },
        },
    )
    world.add(k.TOPOLOGIES, {"metadata": {"name": "default-node-topology"}})
    world.add(k.WORKLOAD_PRIORITY_CLASSES, {"metadata": {"name": "taugrid-default"}})
    world.add(k.PRIORITY_CLASSES, {"metadata": {"name": "taugrid-default"}})
    return world


def profile(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "research.training.1x",
        "applicability": {"teams": ["research"], "lanes": ["training"], "namespaces": ["team-a"]},
        "gpusPerWorker": 1,
        "workerCount": 1,
        "mode": "fixed",
        "placement": "independent",
        "defaultLocalQueue": "jobqueue",
        "executionTarget": "singleCluster",
        "priorities": {
            "workloadPriorityClassName": "taugrid-default",
            "podPriorityClassName": "taugrid-default",
        },
    }
    base.update(overrides)
    return base

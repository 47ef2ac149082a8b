"""The controller's API access: `tau.kube.KubeClient` plus in-cluster config and PUT.

Inside a pod the controller authenticates with its ServiceAccount token; anywhere else it
uses a kubeconfig like every other tau component.
"""

from __future__ import annotations

import os
from typing import Any

from tau.kube import KubeClient
from tau.kube.errors import ConflictError, NotFoundError
from tau.kube.resources import (
    CLUSTER_QUEUES,
    LOCAL_QUEUES,
    NAMESPACES,
    ROLE_BINDINGS,
    SERVICE_ACCOUNTS,
    TAU_CLUSTERS,
    TAU_QUOTA_REQUESTS,
    TAU_WORKSPACES,
    Resource,
)

RBAC = "rbac.authorization.k8s.io"
KUEUE = "kueue.x-k8s.io"
ROLES = Resource(RBAC, "v1", "roles", "Role")
CLUSTER_ROLE_BINDINGS = Resource(RBAC, "v1", "clusterrolebindings", "ClusterRoleBinding", False)
NODES = Resource("", "v1", "nodes", "Node", False)
RESOURCE_FLAVORS = Resource(KUEUE, "v1beta2", "resourceflavors", "ResourceFlavor", False)
TOPOLOGIES = Resource(KUEUE, "v1beta2", "topologies", "Topology", False)
WORKLOAD_PRIORITY_CLASSES = Resource(
    KUEUE, "v1beta2", "workloadpriorityclasses", "WorkloadPriorityClass", False
)
ADMISSION_CHECKS = Resource(KUEUE, "v1beta2", "admissionchecks", "AdmissionCheck", False)
MULTIKUEUE_CONFIGS = Resource(KUEUE, "v1beta1", "multikueueconfigs", "MultiKueueConfig", False)
MULTIKUEUE_CLUSTERS = Resource(KUEUE, "v1beta1", "multikueueclusters", "MultiKueueCluster", False)
PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False)

__all__ = [
    "ADMISSION_CHECKS",
    "CLUSTER_QUEUES",
    "CLUSTER_ROLE_BINDINGS",
    "LOCAL_QUEUES",
    "MULTIKUEUE_CLUSTERS",
    "MULTIKUEUE_CONFIGS",
    "NAMESPACES",
    "NODES",
    "PRIORITY_CLASSES",
    "RESOURCE_FLAVORS",
    "ROLES",
    "ROLE_BINDINGS",
    "SERVICE_ACCOUNTS",
    "TAU_CLUSTERS",
    "TAU_QUOTA_REQUESTS",
    "TAU_WORKSPACES",
    "TOPOLOGIES",
    "WORKLOAD_PRIORITY_CLASSES",
    "ConflictError",
    "ControllerClient",
    "NotFoundError",
]


class ControllerClient(KubeClient):
    def _load(self) -> Any:
        if self.kubeconfig or "KUBERNETES_SERVICE_HOST" not in os.environ:
            return super()._load()
        from kubernetes import client, config

        configuration = client.Configuration()
        # kubernetes.config leaves its loaders unannotated.
        config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        self.host = configuration.host
        return client.ApiClient(configuration=configuration)

    def replace(
        self, resource: Resource, obj: dict[str, Any], *, subresource: str = ""
    ) -> dict[str, Any]:
        """PUT the whole object (or its status); stale resourceVersions raise ConflictError."""
        meta = obj["metadata"]
        namespace = meta.get("namespace", "") if resource.namespaced else ""
        return self.request(
            "PUT",
            resource.path(namespace, meta["name"], subresource),
            what=f"update {resource.display} {meta['name']!r}",
            body=obj,
        )

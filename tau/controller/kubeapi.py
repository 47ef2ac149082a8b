"""The controller's API access: `tau.kube.KubeClient` plus in-cluster config, PUT, and a
count of its requests.

Inside a pod the controller authenticates with its ServiceAccount token; anywhere else it
uses a kubeconfig like every other tau component. Its requests, counted by Kubernetes verb and
resource, are `tau_controller_api_requests_total` on /metrics: how an operator (and the
benchmark) sees that an idle controller lists nothing and writes nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tau import keys
from tau.kube.errors import ConflictError, NotFoundError
from tau.kube.informer import CountingClient
from tau.kube.resources import (
    ADMISSION_CHECKS,
    CLUSTER_QUEUES,
    CLUSTER_ROLE_BINDINGS,
    CONFIG_MAPS,
    LOCAL_QUEUES,
    MULTIKUEUE_CLUSTERS,
    MULTIKUEUE_CONFIGS,
    NAMESPACES,
    NODES,
    PRIORITY_CLASSES,
    RESOURCE_FLAVORS,
    ROLE_BINDINGS,
    ROLES,
    SERVICE_ACCOUNTS,
    TAU_CLUSTERS,
    TAU_QUOTA_REQUESTS,
    TAU_WORKSPACES,
    TOPOLOGIES,
    WORKLOAD_PRIORITY_CLASSES,
    Resource,
)

if TYPE_CHECKING:
    from kubernetes.client.configuration import Configuration

__all__ = [
    "ADMISSION_CHECKS",
    "CLUSTER_QUEUES",
    "CLUSTER_ROLE_BINDINGS",
    "CONFIG_MAPS",
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


class ControllerClient(CountingClient):
    def _load(self) -> Configuration:
        """Inside a pod (no kubeconfig given) the ServiceAccount wins, even over a
        ~/.kube/config baked into the image."""
        if self.kubeconfig or keys.ENV_KUBERNETES_SERVICE_HOST not in os.environ:
            return super()._load()
        from kubernetes.client.configuration import Configuration
        from kubernetes.config import incluster_config

        configuration = Configuration()
        # kubernetes.config leaves its loaders unannotated.
        incluster_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        return configuration

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

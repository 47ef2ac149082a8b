"""The two endpoint kinds: what each renders, and the objects each owns in the cluster.

A RayService owns its RayClusters and their Services through KubeRay's owner references;
a Deployment endpoint owns the Service and HPA of the same name that `tau serve` created
(recognised by the `tau.azure.com/service` label).
"""

from __future__ import annotations

from typing import Any

from tau import keys
from tau.kube.resources import (
    DEPLOYMENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    RAY_SERVICES,
    SERVICES,
    Resource,
)
from tau.render.deployment import render_deployment
from tau.render.endpoint import ServeIntent
from tau.render.rayservice import render_rayservice

# Primary object first, then what tau serve created beside it.
KIND_RESOURCES: dict[str, tuple[Resource, ...]] = {
    "rayservice": (RAY_SERVICES,),
    "deployment": (DEPLOYMENTS, SERVICES, HORIZONTAL_POD_AUTOSCALERS),
}
OBJECT_RESOURCES: dict[str, Resource] = {
    resource.kind: resource for resources in KIND_RESOURCES.values() for resource in resources
}


def render(intent: ServeIntent) -> list[dict[str, Any]]:
    if intent.kind == "rayservice":
        return render_rayservice(intent)
    return render_deployment(intent)


def owned_by_serve(obj: dict[str, Any], name: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get(keys.SERVICE) == name and labels.get(keys.MANAGED_BY) == keys.MANAGED_BY_VALUE

"""Validate rendered objects against the Kubernetes OpenAPI schema (kubernetes-validate).

KubeRay's RayJob and RayService are not in that schema, so their pod templates are validated
as core `v1/PodTemplate` objects: every pod field KubeRay passes through is still checked.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate

KUBERNETES_VERSION = "1.37.0"
RAY_CLUSTER_SPEC = {"RayJob": "rayClusterSpec", "RayService": "rayClusterConfig"}


def validate(obj: dict[str, Any]) -> None:
    kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def validate_pod_template(template: dict[str, Any]) -> None:
    validate(
        {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": "rendered"},
            "template": template,
        }
    )


def pod_templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    if obj["kind"] in ("Job", "Deployment"):
        return [obj["spec"]["template"]]
    if obj["kind"] in RAY_CLUSTER_SPEC:
        cluster = obj["spec"][RAY_CLUSTER_SPEC[obj["kind"]]]
        return [cluster["headGroupSpec"]["template"]] + [
            group["template"] for group in cluster.get("workerGroupSpecs", [])
        ]
    return []


def validate_rendered(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj["kind"] not in RAY_CLUSTER_SPEC:
            validate(obj)
        for template in pod_templates(obj):
            validate_pod_template(template)

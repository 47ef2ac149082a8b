"""Deletes that take their dependents with them.

A bare DELETE of a batch/v1 Job orphans its pods (the API's legacy default for Jobs), which
would leave quota-holding pods behind after `tau run cancel`; every lifecycle delete names
its propagation policy explicitly.
"""

from __future__ import annotations

from tau.jsontypes import JSONObject
from tau.kube.client import KubeClient, _describe
from tau.kube.errors import NotFoundError
from tau.kube.resources import Resource


def delete(
    kube: KubeClient,
    resource: Resource,
    name: str,
    namespace: str,
    *,
    propagation: str = "Background",
    ignore_missing: bool = True,
) -> JSONObject | None:
    """DELETE with `propagationPolicy`; a missing object (not type) is None when ignored."""
    try:
        return kube.request(
            "DELETE",
            resource.path(namespace, name),
            what=_describe("delete", resource, name, namespace),
            query=[("propagationPolicy", propagation)],
        )
    except NotFoundError as error:
        if ignore_missing and not error.resource_missing:
            return None
        raise

"""The one package that talks to the Kubernetes API server.

`KubeClient(kubeconfig, context)` gives get/list/create/patch/delete for any `Resource`
(core or custom, plain dicts in and out) plus `can_i` (SelfSubjectAccessReview). Failures
are `KubeError` subclasses whose one-line message starts with the failing layer.
"""

from tau.kube.client import AccessReview, KubeClient, ObjectLister, ObjectReader
from tau.kube.errors import (
    AccessError,
    AuthorizationError,
    ConflictError,
    InvalidError,
    KubeError,
    NotFoundError,
    UnavailableError,
)
from tau.kube.resources import Resource

__all__ = [
    "AccessError",
    "AccessReview",
    "AuthorizationError",
    "ConflictError",
    "InvalidError",
    "KubeClient",
    "KubeError",
    "NotFoundError",
    "ObjectLister",
    "ObjectReader",
    "Resource",
    "UnavailableError",
]

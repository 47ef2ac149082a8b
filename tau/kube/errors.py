"""Typed API-server failures, each naming the layer a user must look at.

A researcher seeing "403" cannot tell whether their kubeconfig, the platform's RBAC or the
cluster itself is at fault. Every error raised by `tau.kube` says which layer failed
(access, authorization, not found, conflict, validation, apiserver unavailable) and who
usually owns the fix, in one line that never carries credential material.
"""

from __future__ import annotations

from tau.errors import RuntimeFailure

OWNER_USER = "researcher or platform operator running tau: kubeconfig, sign-in or network path"
OWNER_PLATFORM = "platform operator"


class KubeError(RuntimeFailure):
    """Base of every API-server failure; `layer` is stable and machine-checkable."""

    layer = "apiserver"
    default_owner = OWNER_PLATFORM

    def __init__(self, message: str, *, hint: str = "", owner: str = "", status: int = 0):
        super().__init__(f"{self.layer}: {message}", hint=hint, owner=owner or self.default_owner)
        self.status = status


class AccessError(KubeError):
    """The caller could not authenticate or reach the cluster with this kubeconfig/context."""

    layer = "access"
    default_owner = OWNER_USER


class AuthorizationError(KubeError):
    """Authenticated, but RBAC denies the request (HTTP 403)."""

    layer = "authorization"


class NotFoundError(KubeError):
    """The object (or, with `resource_missing`, its whole API type) does not exist."""

    layer = "not found"

    def __init__(
        self,
        message: str,
        *,
        resource_missing: bool = False,
        hint: str = "",
        owner: str = "",
        status: int = 0,
    ) -> None:
        super().__init__(message, hint=hint, owner=owner, status=status)
        self.resource_missing = resource_missing


class ConflictError(KubeError):
    """The object already exists or changed underneath us (HTTP 409)."""

    layer = "conflict"


class InvalidError(KubeError):
    """The API server rejected the object's content (HTTP 400/422)."""

    layer = "validation"


class UnavailableError(KubeError):
    """The API server did not answer or answered with a server-side failure."""

    layer = "apiserver unavailable"
    default_owner = "platform operator (cluster control plane) or your network path"

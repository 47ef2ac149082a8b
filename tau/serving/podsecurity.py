"""Whether an endpoint's pods must pass Pod Security `restricted` in its namespace.

A Deployment is admitted even where its pods are not: the ReplicaSet controller meets the
namespace's refusal and the endpoint never gets a pod, with nothing on the researcher's
terminal. So endpoints render restricted pods unless the namespace is known to enforce a
lower level. Researchers cannot read Namespaces, and workspace namespaces enforce
`restricted` by default, so for them (and offline) that is the level assumed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau import keys
from tau.kube.errors import AuthorizationError
from tau.kube.resources import NAMESPACES

if TYPE_CHECKING:
    from tau.kube import KubeClient

RESTRICTED = "restricted"


def restricted_for(client: KubeClient, namespace: str) -> bool:
    try:
        found = client.get_or_none(NAMESPACES, namespace)
    except AuthorizationError:
        return True
    labels = ((found or {}).get("metadata") or {}).get("labels") or {}
    level: str = labels.get(keys.PSA_ENFORCE, RESTRICTED)
    return level == RESTRICTED

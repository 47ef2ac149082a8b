"""The namespace's platform-managed default LocalQueue: how a served workload is admitted.

A researcher never picks a queue for an endpoint. The platform onboards a namespace by
labelling it `kueue.x-k8s.io/default-local-queue=<queue>` (the TauWorkspace controller does)
or by giving it Kueue's defaulting LocalQueue named `default`; a researcher, who may not
read Namespaces, finds the controller's LocalQueue by its labels. Without a usable one the
pods would wait forever unadmitted, so deploy stops with an onboarding error and creates
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tau import keys
from tau.errors import RuntimeFailure
from tau.kube.errors import AuthorizationError, NotFoundError
from tau.kube.resources import LOCAL_QUEUES, NAMESPACES

if TYPE_CHECKING:
    from tau.kube import KubeClient

KUEUE_DEFAULT_NAME = "default"
ONBOARDING_OWNER = "platform operator (namespace onboarding)"
STOPPED = ("Hold", "HoldAndDrain")


class OnboardingError(RuntimeFailure):
    """The target namespace is not set up for admitted workloads; nothing was created."""


@dataclass(frozen=True)
class Queue:
    name: str
    cluster_queue: str
    source: str


def resolve_queue(client: KubeClient, namespace: str, profile: dict[str, Any]) -> Queue:
    """The usable default LocalQueue of `namespace`, checked against the serving profile."""
    name, source = _default_name(client, namespace)
    lq = client.get_or_none(LOCAL_QUEUES, name, namespace)
    if lq is None:
        raise OnboardingError(
            f'namespace "{namespace}" names default LocalQueue "{name}" ({source}), which does'
            " not exist; nothing was created",
            hint="restore the LocalQueue or re-onboard the namespace",
            owner=ONBOARDING_OWNER,
        )
    problem = unusable(lq)
    if problem:
        raise OnboardingError(
            f'default LocalQueue "{namespace}/{name}" is not usable: {problem}; nothing was'
            " created",
            owner=ONBOARDING_OWNER,
        )
    cluster_queue = lq["spec"]["clusterQueue"]
    allowed = profile.get("clusterQueues") or []
    if allowed and cluster_queue not in allowed:
        raise OnboardingError(
            f'default LocalQueue "{namespace}/{name}" feeds ClusterQueue "{cluster_queue}",'
            f' which workload profile "{profile.get("name")}" does not admit through'
            f" ({', '.join(allowed)}); nothing was created",
            hint="serve with a profile that applies to this namespace",
            owner=ONBOARDING_OWNER,
        )
    return Queue(name=name, cluster_queue=cluster_queue, source=source)


def _default_name(client: KubeClient, namespace: str) -> tuple[str, str]:
    label = ""
    try:
        ns = client.get(NAMESPACES, namespace)
    except NotFoundError:
        raise OnboardingError(
            f'namespace "{namespace}" does not exist; nothing was created',
            hint="use the namespace from your platform handoff",
            owner=ONBOARDING_OWNER,
        ) from None
    except AuthorizationError:
        ns = None  # researchers may not read Namespaces
    if ns is not None:
        label = (ns.get("metadata", {}).get("labels") or {}).get(keys.KUEUE_DEFAULT_LOCAL_QUEUE, "")
    if label:
        return label, f"namespace label {keys.KUEUE_DEFAULT_LOCAL_QUEUE}"
    if ns is None:
        # The label is out of a researcher's sight, but the queue it names is the one the
        # TauWorkspace controller made here (it keeps exactly one per workspace namespace).
        managed = client.list(
            LOCAL_QUEUES,
            namespace=namespace,
            label_selector=f"{keys.APP_MANAGED_BY}={keys.CONTROLLER_NAME}",
        )
        if len(managed) == 1:
            return managed[0]["metadata"]["name"], "the TauWorkspace's LocalQueue"
    if client.get_or_none(LOCAL_QUEUES, KUEUE_DEFAULT_NAME, namespace) is not None:
        return KUEUE_DEFAULT_NAME, "Kueue's default LocalQueue name"
    raise OnboardingError(
        f'namespace "{namespace}" has no platform-managed default LocalQueue (no'
        f' {keys.KUEUE_DEFAULT_LOCAL_QUEUE} label and no LocalQueue "{KUEUE_DEFAULT_NAME}");'
        " nothing was created",
        hint="onboard the namespace as a TauWorkspace (it labels the namespace and creates"
        " the queue)",
        owner=ONBOARDING_OWNER,
    )


def unusable(lq: dict[str, Any]) -> str:
    """Why Kueue would never admit through this LocalQueue ('' when it would)."""
    spec = lq.get("spec") or {}
    if not spec.get("clusterQueue"):
        return "it names no ClusterQueue"
    if spec.get("stopPolicy") in STOPPED:
        return f"it is stopped (stopPolicy {spec['stopPolicy']})"
    for condition in (lq.get("status") or {}).get("conditions") or []:
        if condition.get("type") == keys.COND_ACTIVE and condition.get("status") == "False":
            reason = condition.get("reason") or "inactive"
            message = condition.get("message") or ""
            return f"it is not active ({reason}{': ' + message if message else ''})"
    return ""

"""One-pod helper Jobs: where they may run, and running one to its end.

`tau run get`'s reader and `tau data`'s registry helpers are short batch Jobs, not bare pods:
the researcher role creates Jobs already, while bare pod create would let any pod bypass
Kueue. They use a pinned busybox image (or the platform's mirror, `TAU_HELPER_IMAGE`), and
where every node is tainted `TAU_HELPER_NODE_SELECTOR` and `TAU_HELPER_TOLERATIONS` say
where they may run.
"""

from __future__ import annotations

import os
import time
from typing import Any

from tau import keys
from tau.errors import UsageError
from tau.jsontypes import JSONObject
from tau.kube.client import KubeClient
from tau.kube.deletion import delete
from tau.kube.resources import JOBS, PODS
from tau.kube.stream import pod_log, watch

READER_IMAGE = "busybox:1.36.1"
# Left behind only if the creating process dies mid-read; the job controller cleans up.
READER_TTL = 300


def placement(env: dict[str, str] | None = None) -> JSONObject:
    """Image, nodeSelector and tolerations of helper pods from the platform's env knobs."""
    env = dict(os.environ if env is None else env)
    out: dict[str, Any] = {"image": env.get(keys.ENV_HELPER_IMAGE) or READER_IMAGE}
    selector = {}
    for item in filter(None, (env.get(keys.ENV_HELPER_NODE_SELECTOR) or "").split(",")):
        key, sep, value = item.strip().partition("=")
        if not sep or not key:
            raise UsageError(f"{keys.ENV_HELPER_NODE_SELECTOR}: {item!r} is not key=value")
        selector[key] = value
    if selector:
        out["nodeSelector"] = selector
    tolerations = []
    for item in filter(None, (env.get(keys.ENV_HELPER_TOLERATIONS) or "").split(",")):
        match, _, effect = item.strip().rpartition(":")
        key, sep, value = match.partition("=")
        if not key or not effect:
            raise UsageError(
                f"{keys.ENV_HELPER_TOLERATIONS}: {item!r} is not key=value:Effect or key:Effect"
            )
        toleration = {"key": key, "operator": "Equal" if sep else "Exists", "effect": effect}
        if sep:
            toleration["value"] = value
        tolerations.append(toleration)
    if tolerations:
        out["tolerations"] = tolerations
    return out


def run_job_pod(
    kube: KubeClient, namespace: str, job: JSONObject, *, container: str, timeout: float
) -> tuple[str, list[str]] | None:
    """Create a one-pod Job, wait for its pod to end, read `container`'s log, delete both.

    (terminal phase, log lines), or None when the pod has not ended within `timeout`: the
    caller names what it was waiting for."""
    name = job["metadata"]["name"]
    kube.create(JOBS, job, namespace)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in watch(
                kube,
                PODS,
                namespace,
                label_selector=f"{keys.JOB_NAME_LABEL}={name}",
                timeout_seconds=10,
            ):
                obj = event.get("object") or {}
                phase = (obj.get("status") or {}).get("phase", "")
                if phase in ("Succeeded", "Failed"):
                    pod = (obj.get("metadata") or {}).get("name", "")
                    return phase, list(pod_log(kube, namespace, pod, container=container))
        return None
    finally:
        delete(kube, JOBS, name, namespace, propagation="Foreground")

"""Wait for the next change of a run instead of sleeping a fixed interval.

One watch request per refresh: on the run's pods once it has any, else on the Job/RayJob
itself. The watch replays existing objects first; those are skipped when their
resourceVersion is the one the snapshot already saw, so only real changes wake the loop.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from tau.jsontypes import JSONObject
from tau.kube import KubeClient, KubeError
from tau.kube.resources import JOBS, PODS, RAY_JOBS
from tau.kube.stream import watch
from tau.lifecycle.snapshot import Snapshot


def _seen(objects: Sequence[JSONObject | None]) -> set[tuple[str, str]]:
    return {(o["metadata"]["name"], o["metadata"].get("resourceVersion", "")) for o in objects if o}


def wait_for_change(kube: KubeClient, snap: Snapshot, timeout: float) -> None:
    """Return at the first change (or after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    known: Sequence[dict[str, Any] | None]
    if snap.pods:
        resource, selector, field, known = PODS, f"job-name={snap.name}", "", snap.pods
        if snap.primary_rayjob is not None and snap.ray_cluster_name:
            selector = f"ray.io/cluster={snap.ray_cluster_name}"
    elif snap.job is not None or snap.rayjob is not None:
        resource = JOBS if snap.job is not None else RAY_JOBS
        selector, field = "", f"metadata.name={snap.name}"
        known = [snap.job if snap.job is not None else snap.rayjob]
    else:
        time.sleep(timeout)
        return
    seen = _seen(known)
    try:
        for event in watch(
            kube,
            resource,
            snap.namespace,
            label_selector=selector,
            field_selector=field,
            timeout_seconds=max(1, int(timeout)),
        ):
            obj = event.get("object") or {}
            meta = obj.get("metadata") or {}
            if event.get("type") == "BOOKMARK":
                continue
            if (meta.get("name"), meta.get("resourceVersion", "")) not in seen:
                return
            if time.monotonic() >= deadline:
                return
    except KubeError:
        remaining = deadline - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)

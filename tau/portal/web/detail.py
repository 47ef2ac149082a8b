"""One run's page: the `tau run status` document, read from the watch cache, plus a log tail.

The phase tree, diagnostics and events are `tau.lifecycle.status.document` over the snapshot
`tau.lifecycle.snapshot.collect` builds, the very functions behind `tau run status -o json`;
only the reads differ (the cache instead of fresh API calls).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from tau import keys
from tau.connection import Target
from tau.kube import InvalidError, KubeError
from tau.kube.stream import pod_log
from tau.lifecycle import objects as o
from tau.lifecycle import status as lifecycle_status
from tau.lifecycle.snapshot import Snapshot, collect

MAX_LOG_PODS = 4
MAX_TAIL = 1000


def snapshot(reader: Any, namespace: str, name: str) -> Snapshot:
    return collect(reader, namespace, name)


def experiment_link(snap: Snapshot, workspace: str) -> dict[str, str]:
    """The shared Stellar link of the run: its experiment when it names one, else the run."""
    owner = snap.job if snap.job is not None else snap.rayjob
    meta = (owner or {}).get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    run_id = labels.get(keys.RUN_ID) or snap.name
    experiment = annotations.get(keys.STELLAR_EXPERIMENT_ID) or ""
    project = annotations.get(keys.STELLAR_PROJECT_VALUE) or labels.get(keys.STELLAR_PROJECT, "")
    params = {"target": experiment or run_id, "project": project, "workspace": workspace}
    return {
        "runId": run_id,
        "experiment": experiment,
        "project": project,
        "url": "/stellar?" + urlencode({k: v for k, v in params.items() if v}),
    }


def document(reader: Any, namespace: str, name: str, workspace: str) -> dict[str, Any]:
    snap = snapshot(reader, namespace, name)
    doc = lifecycle_status.document(snap, Target(None, "", namespace))
    doc["experiment"] = experiment_link(snap, workspace)
    return doc


def log_tail(reader: Any, namespace: str, name: str, tail: int) -> dict[str, Any]:
    """The last `tail` lines of the default container of the run's first pods."""
    tail = max(1, min(tail, MAX_TAIL))
    snap = snapshot(reader, namespace, name)
    streams = []
    for pod in snap.pods[:MAX_LOG_PODS]:
        containers = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
        default = ((pod.get("metadata") or {}).get("annotations") or {}).get(
            "kubectl.kubernetes.io/default-container"
        ) or (containers[0] if containers else "")
        entry: dict[str, Any] = {"pod": o.name(pod), "container": default, "lines": []}
        try:
            entry["lines"] = list(
                pod_log(reader, namespace, o.name(pod), container=default, tail=tail)
            )
        except InvalidError:
            entry["note"] = "the container has not started yet"
        except KubeError as error:
            entry["note"] = error.one_line()
        streams.append(entry)
    return {
        "name": name,
        "namespace": namespace,
        "found": snap.found,
        "tail": tail,
        "pods": len(snap.pods),
        "streams": streams,
    }

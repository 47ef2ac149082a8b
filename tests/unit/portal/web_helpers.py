"""Build a Portal whose watch cache holds given objects (no API server is contacted).

The boards are the real code; only the informers are pre-filled, the way a LIST would have
filled them. The recorded snapshots under tests/unit/lifecycle/snapshots come from the local
control plane (real Kueue admission decisions, KWOK pod outcomes).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tau.kube import KubeClient
from tau.kube.informer import SYNCED
from tau.portal.web.app import Portal, create_app
from tau.portal.web.config import PortalConfig

RECORDED = Path(__file__).resolve().parents[1] / "lifecycle" / "snapshots"


def recorded(name: str) -> dict[str, Any]:
    """A recorded snapshot, its objects moved to the snapshot's namespace (`research`)."""
    snap = json.loads((RECORDED / f"{name}.json").read_text())
    for key in ("job", "rayjob", "workloads", "pods", "events"):
        for obj in snap[key] if isinstance(snap[key], list) else [snap[key]]:
            if obj and obj.get("metadata", {}).get("namespace"):
                obj["metadata"]["namespace"] = snap["namespace"]
    return snap


def portal(config: PortalConfig, objects: list[dict[str, Any]], history: Any = None) -> Portal:
    """A Portal over `objects` (each with kind and metadata.namespace where namespaced);
    `history` replaces the run history source the config names."""
    kube = KubeClient("/nonexistent/kubeconfig")  # any real request would fail loudly
    made = Portal(config, kube, history)
    for informer in made.cache.informers.values():
        informer.state = SYNCED
        informer.synced.set()
    for obj in objects:
        obj = copy.deepcopy(obj)
        for informer in made.cache.informers.values():
            same_kind = informer.resource.kind == obj["kind"]
            ns = obj["metadata"].get("namespace", "")
            if same_kind and (not informer.resource.namespaced or informer.namespace == ns):
                informer.items[obj["metadata"]["name"]] = obj
    return made


def client(made: Portal) -> TestClient:
    return TestClient(create_app(made), base_url="http://localhost")


def snapshot_objects(name: str, namespace: str = "") -> list[dict[str, Any]]:
    """Every object of a recorded run snapshot, moved to `namespace` when given."""
    snap = recorded(name)
    objects = [
        *(("Job", o) for o in [snap["job"]]),
        *(("RayJob", o) for o in [snap["rayjob"]]),
        *(("Workload", o) for o in snap["workloads"]),
        *(("Pod", o) for o in snap["pods"]),
        *(("Event", o) for o in snap["events"]),
    ]
    found = []
    for kind, obj in objects:
        if not obj:
            continue
        obj = copy.deepcopy(obj)
        obj.setdefault("kind", kind)
        if namespace:
            obj["metadata"]["namespace"] = namespace
        found.append(obj)
    return found

"""The TauCluster reconciler's watch-fed copy of everything it reads but the TauCluster.

Node labelling and profile resolution read Nodes and the Kueue and scheduling objects on
every pass; over a thousand nodes, re-listing them each time was most of the controller's
CPU. Here each type is one informer (`tau.kube.informer`: LIST once, then one WATCH), so a
pass — the first, a periodic resync, or one a watch event queued — reads memory only and
sends no read request. The TauCluster itself is still read fresh each pass: its status is
compared with, and written over, the object's latest resourceVersion.

Events wake the reconciler only when they can change what it decides: any change of an input
object, but of a Node only its arrival, departure or a label change (the kubelet, or KWOK,
rewrites node status every few minutes), and not the label change of the reconciler's own
patch. Nodes are held as their metadata, all a pass reads of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from tau.controller import kubeapi as k
from tau.kube import KubeClient, NotFoundError
from tau.kube.informer import ObjectCache
from tau.kube.resources import Resource

# Everything `ClusterReconciler` reads besides the TauCluster.
CLUSTER_INPUTS = (
    k.NODES,
    k.LOCAL_QUEUES,
    k.CLUSTER_QUEUES,
    k.RESOURCE_FLAVORS,
    k.TOPOLOGIES,
    k.WORKLOAD_PRIORITY_CLASSES,
    k.PRIORITY_CLASSES,
    k.ADMISSION_CHECKS,
    k.MULTIKUEUE_CONFIGS,
    k.MULTIKUEUE_CLUSTERS,
)


class ClusterInputs:
    """The `World` of profile resolution plus the Nodes, answered from informers.

    `on_change(why)` is called from the informer threads whenever a pass could decide
    differently (`why` names the event, e.g. `Node gpu-0 relabelled`); the operator
    turns it into a queued TauCluster key.
    """

    def __init__(self, client: KubeClient, on_change: Callable[[str], None]) -> None:
        self.cache = ObjectCache(client)
        self._on_change = on_change
        self._node_labels: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        for resource in CLUSTER_INPUTS:
            if resource is k.NODES:  # a pass reads a Node's name and labels only
                self.cache.add(resource, on_change=self._node_event, metadata_only=True)
            else:
                self.cache.add(resource, on_change=self._event)

    def start(self) -> None:
        self.cache.start()

    def stop(self) -> None:
        self.cache.stop()

    def synced(self) -> bool:
        """Every type listed once (or known to be missing or forbidden): until then a pass
        would report present objects as missing."""
        return all(informer.synced.is_set() for informer in self.cache.informers.values())

    def get(self, resource: Resource, name: str, namespace: str = "") -> dict[str, Any] | None:
        """The cached object; None when it, or its API type, does not exist."""
        try:
            return self.cache.get(resource, name, namespace)
        except NotFoundError:
            return None

    def list(self, resource: Resource) -> list[dict[str, Any]]:
        return self.cache.list(resource)

    def expect_labels(self, patches: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        """Nodes about to be patched with these labels: the watch event each patch causes
        (labels this pass already counts) is then no change to wake the reconciler for.
        Returns the labels known before, for `unexpect_labels` of the patches that failed.
        An event that came in between (someone else's change) still wakes it, as does one
        carrying anything but the expected labels."""
        before = {}
        with self._lock:
            for name, labels in patches.items():
                known = self._node_labels.get(name)
                if known is not None:
                    before[name] = known
                    self._node_labels[name] = {**known, **labels}
        return before

    def unexpect_labels(self, before: dict[str, dict[str, str]], names: Iterable[str]) -> None:
        """These nodes' patches did not take: their labels are the ones known before."""
        with self._lock:
            for name in names:
                if name in before and name in self._node_labels:
                    self._node_labels[name] = before[name]

    def _event(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        where = f"{meta['namespace']}/" if meta.get("namespace") else ""
        self._on_change(f"{obj.get('kind', 'object')} {where}{meta.get('name', '')} {kind}")

    def _node_event(self, kind: str, obj: dict[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name") or "")
        informer = self.cache.informer(k.NODES)
        gone = kind == "DELETED" or (informer is not None and informer.get(name) is None)
        labels = None if gone else dict((obj.get("metadata") or {}).get("labels") or {})
        with self._lock:
            before = self._node_labels.get(name)
            if labels is None:
                self._node_labels.pop(name, None)
            else:
                self._node_labels[name] = labels
        if labels != before:
            change = "left" if labels is None else "arrived" if before is None else "relabelled"
            self._on_change(f"Node {name} {change}")

"""The Jobs/Queue board: Kueue's quota and its waiting line, per ClusterQueue and LocalQueue.

"Why is my workload still pending?" is answered with Kueue's own words: each pending
Workload's QuotaReserved/eviction reason (the same reader `tau run status` uses) and its
position. Positions come from Kueue's pending-workloads visibility API when the cluster
serves it (polled per LocalQueue in the background: namespaced, so the Portal needs no
cluster-wide read of other teams' workloads); otherwise they are computed in Kueue's
BestEffortFIFO order (priority, then age) over the workloads the Portal can see, and the
board says so (`positionSource`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from tau import keys
from tau.kube import AuthorizationError, KubeClient, KubeError, NotFoundError
from tau.lifecycle import objects as o
from tau.lifecycle import phases as ph

VISIBILITY_GROUP = keys.KUEUE_VISIBILITY_GROUP
POLL_SECONDS = 5.0
FROM_VISIBILITY, COMPUTED = "kueue-visibility", "computed"


def quantity(text: Any) -> float:
    """A Kubernetes quantity as a number (cpu "500m" = 0.5, memory "2Gi" = 2**31)."""
    value = str(text or "0").strip()
    suffixes = {
        "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
        "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
        "P": 1e15, "E": 1e18,
    }  # fmt: skip
    for suffix in sorted(suffixes, key=len, reverse=True):
        if value.endswith(suffix):
            try:
                return float(value[: -len(suffix)]) * suffixes[suffix]
            except ValueError:
                return 0.0
    try:
        return float(value)
    except ValueError:
        return 0.0


def _usage(status: dict[str, Any], key: str) -> dict[tuple[str, str], str]:
    found = {}
    for flavor in status.get(key) or []:
        for res in flavor.get("resources") or []:
            found[(flavor.get("name", ""), res.get("name", ""))] = str(res.get("total", "0"))
    return found


def flavors(cq: dict[str, Any]) -> list[dict[str, Any]]:
    """Nominal vs used (admitted) and reserved quota per flavor and resource."""
    st = o.status(cq)
    used = _usage(st, "flavorsUsage")
    reserved = _usage(st, "flavorsReservation")
    rows = []
    for group in (cq.get("spec") or {}).get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                key = (flavor.get("name", ""), res.get("name", ""))
                nominal = str(res.get("nominalQuota", "0"))
                rows.append(
                    {
                        "flavor": key[0],
                        "resource": key[1],
                        "nominal": nominal,
                        "used": used.get(key, "0"),
                        "reserved": reserved.get(key, "0"),
                        "borrowingLimit": str(res.get("borrowingLimit", "")),
                        "full": quantity(reserved.get(key, "0")) >= quantity(nominal) > 0,
                    }
                )
    return rows


def workload_owner(wl: dict[str, Any]) -> dict[str, str]:
    for ref in (wl.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") or ref.get("kind") in ("Job", "RayJob"):
            return {"kind": ref.get("kind", ""), "name": ref.get("name", "")}
    return {"kind": "", "name": ""}


def _created(wl: dict[str, Any]) -> str:
    return str((wl.get("metadata") or {}).get("creationTimestamp") or "")


def computed_positions(pending: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, int]]:
    """(namespace, name) -> (position in ClusterQueue, in LocalQueue), 0-based, in
    BestEffortFIFO order: higher priority first, then older first."""
    order = sorted(
        pending, key=lambda w: (-int((w.get("spec") or {}).get("priority") or 0), _created(w))
    )
    result: dict[tuple[str, str], tuple[int, int]] = {}
    per_lq: dict[tuple[str, str], int] = {}
    for index, wl in enumerate(order):
        meta = wl.get("metadata") or {}
        lq = (meta.get("namespace", ""), (wl.get("spec") or {}).get("queueName", ""))
        per_lq[lq] = per_lq.get(lq, -1) + 1
        result[(meta.get("namespace", ""), meta.get("name", ""))] = (index, per_lq[lq])
    return result


class Visibility:
    """Kueue's pending-workloads API for a set of LocalQueues, polled in the background."""

    def __init__(self, kube: KubeClient, local_queues: Callable[[], Iterable[tuple[str, str]]]):
        self.kube = kube
        self.local_queues = local_queues
        self.version = ""
        self.state = "not checked"
        self.positions: dict[tuple[str, str], dict[str, Any]] = {}
        self._stop = threading.Event()
        self._lock = threading.Lock()

    def start(self) -> None:
        threading.Thread(target=self._run, name="kueue visibility", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    @property
    def served(self) -> bool:
        return bool(self.version) and self.state == "served"

    def _discover(self) -> None:
        try:
            group = self.kube.request("GET", f"/apis/{VISIBILITY_GROUP}", what="discover Kueue")
        except NotFoundError:
            self.version, self.state = "", f"{VISIBILITY_GROUP} is not served by the API server"
            return
        except KubeError as error:
            self.version, self.state = "", f"discovery failed: {error.one_line()}"
            return
        preferred = (group.get("preferredVersion") or {}).get("version", "")
        self.version = preferred
        self.state = "served" if preferred else f"{VISIBILITY_GROUP} lists no version"

    def poll(self) -> None:
        if not self.version:
            self._discover()
        if not self.version:
            return
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for namespace, queue in self.local_queues():
            path = (
                f"/apis/{VISIBILITY_GROUP}/{self.version}/namespaces/{namespace}"
                f"/localqueues/{queue}/pendingworkloads"
            )
            try:
                body = self.kube.request(
                    "GET", path, what=f"read pending workloads of {namespace}/{queue}"
                )
            except NotFoundError as error:
                if error.resource_missing:
                    self.version, self.state = "", f"unavailable: {error.one_line()}"
                    return
                continue  # that LocalQueue does not exist (yet)
            except AuthorizationError as error:
                self.state = f"forbidden: {error.one_line()}"
                return
            except KubeError as error:
                self.state = f"unavailable: {error.one_line()}"
                self.version = ""
                return
            for item in body.get("items") or []:
                meta = item.get("metadata") or {}
                found[(meta.get("namespace", namespace), meta.get("name", ""))] = item
        self.state = "served"
        with self._lock:
            self.positions = found

    def lookup(self, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self.positions.get((namespace, name))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(POLL_SECONDS)


def board(
    cluster_queues: list[dict[str, Any]],
    local_queues: list[dict[str, Any]],
    workloads: list[dict[str, Any]],
    visibility: Visibility | None,
) -> dict[str, Any]:
    """Queues in scope (`local_queues` are the scope's; their ClusterQueues are shown)."""
    lq_to_cq = {
        ((lq.get("metadata") or {}).get("namespace", ""), o.name(lq)): (lq.get("spec") or {}).get(
            "clusterQueue", ""
        )
        for lq in local_queues
    }
    wanted = set(lq_to_cq.values())
    by_cq: dict[str, list[dict[str, Any]]] = {name: [] for name in wanted}
    for wl in workloads:
        meta = wl.get("metadata") or {}
        lq = (meta.get("namespace", ""), (wl.get("spec") or {}).get("queueName", ""))
        if lq not in lq_to_cq:
            continue
        cq = (o.status(wl).get("admission") or {}).get("clusterQueue") or lq_to_cq[lq]
        by_cq.setdefault(cq, []).append(wl)
    served = visibility is not None and visibility.served
    result = []
    for cq in sorted(cluster_queues, key=o.name):
        name = o.name(cq)
        if name not in wanted:
            continue
        members = by_cq.get(name, [])
        pending = [w for w in members if ph.workload_state(w) in ("Pending", "QuotaReserved")]
        admitted = [w for w in members if ph.workload_state(w) == "Admitted"]
        computed = computed_positions(pending)
        pending_rows = []
        for wl in pending:
            meta = wl.get("metadata") or {}
            key = (meta.get("namespace", ""), meta.get("name", ""))
            seen = visibility.lookup(*key) if served and visibility else None
            if seen is not None:
                position = (seen.get("positionInClusterQueue"), seen.get("positionInLocalQueue"))
                source = FROM_VISIBILITY
            else:
                position, source = computed[key], COMPUTED
            pending_rows.append(
                {
                    **_workload_row(wl),
                    "positionInClusterQueue": position[0],
                    "positionInLocalQueue": position[1],
                    "positionSource": source,
                    "reason": ph.workload_reason(wl),
                }
            )
        pending_rows.sort(key=lambda r: (r["positionInClusterQueue"] or 0, r["name"]))
        st = o.status(cq)
        result.append(
            {
                "name": name,
                "cohort": (cq.get("spec") or {}).get("cohortName")
                or (cq.get("spec") or {}).get("cohort", ""),
                "queueingStrategy": (cq.get("spec") or {}).get("queueingStrategy", ""),
                "active": o.is_true(cq, "Active"),
                "flavors": flavors(cq),
                "pendingWorkloads": int(st.get("pendingWorkloads") or 0),
                "admittedWorkloads": int(st.get("admittedWorkloads") or 0),
                "reservingWorkloads": int(st.get("reservingWorkloads") or 0),
                "admitted": [_workload_row(w) for w in sorted(admitted, key=o.name)],
                "pending": pending_rows,
            }
        )
    locals_ = []
    for local_queue in sorted(
        local_queues, key=lambda q: ((q.get("metadata") or {}).get("namespace", ""), o.name(q))
    ):
        st = o.status(local_queue)
        locals_.append(
            {
                "name": o.name(local_queue),
                "namespace": (local_queue.get("metadata") or {}).get("namespace", ""),
                "clusterQueue": (local_queue.get("spec") or {}).get("clusterQueue", ""),
                "pendingWorkloads": int(st.get("pendingWorkloads") or 0),
                "admittedWorkloads": int(st.get("admittedWorkloads") or 0),
                "reservingWorkloads": int(st.get("reservingWorkloads") or 0),
                "flavorsUsage": [
                    {"flavor": f.get("name", ""), "resources": f.get("resources") or []}
                    for f in st.get("flavorsUsage") or st.get("flavorUsage") or []
                ],
            }
        )
    return {
        "clusterQueues": result,
        "localQueues": locals_,
        "visibility": {
            "served": served,
            "version": visibility.version if visibility else "",
            "state": visibility.state if visibility else "disabled",
        },
    }


def _workload_row(wl: dict[str, Any]) -> dict[str, Any]:
    meta = wl.get("metadata") or {}
    spec = wl.get("spec") or {}
    return {
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "localQueue": spec.get("queueName", ""),
        "priority": int(spec.get("priority") or 0),
        "created": meta.get("creationTimestamp", ""),
        "state": ph.workload_state(wl),
        "owner": workload_owner(wl),
    }

"""One read of everything that decides a run's state: Job, RayJob, Kueue Workloads (and, while
one waits, its place in Kueue's queue), pods, ResourceClaims and events.

The number of API requests is bounded by the kinds of objects, never by the number of pods:
pods, workloads, claims and events are listed with selectors (one request each), so a
256-pod Indexed Job costs the same as a 2-pod one. Individual reads are soft: a failure is
recorded as an observation and the snapshot stays usable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tau import keys
from tau.jsontypes import JSONObject
from tau.kube import KubeError, NotFoundError, ObjectReader
from tau.kube.resources import (
    ADMISSION_CHECKS,
    EVENTS,
    JOBS,
    LOCAL_QUEUES,
    PODS,
    RAY_JOBS,
    RESOURCE_CLAIMS,
    WORKLOADS,
    Resource,
)
from tau.lifecycle.pending import ahead_of

JOB_NAME = "job-name"
VISIBILITY_API = f"/apis/{keys.KUEUE_VISIBILITY_GROUP}/v1beta2"


@dataclass
class Snapshot:
    name: str
    namespace: str
    job: dict[str, Any] | None = None
    rayjob: dict[str, Any] | None = None
    workloads: list[dict[str, Any]] = field(default_factory=list)
    check_controllers: dict[str, str] = field(default_factory=dict)  # "" = lookup failed
    pods: list[dict[str, Any]] = field(default_factory=list)
    pods_observed: bool = False
    claims: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    # Workload name -> Kueue's PendingWorkload (positionInLocalQueue/ClusterQueue, priority).
    positions: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Workload name -> the workloads Kueue ranks before it in its LocalQueue (name, priority).
    ahead: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # LocalQueue name -> its ClusterQueue (whose quota the platform operator owns).
    cluster_queues: dict[str, str] = field(default_factory=dict)
    observations: dict[str, str] = field(default_factory=dict)
    requests: int = 0

    @property
    def found(self) -> bool:
        return self.job is not None or self.rayjob is not None

    @property
    def primary_rayjob(self) -> JSONObject | None:
        """The RayJob counts only when no batch Job of the same name exists."""
        return self.rayjob if self.job is None else None

    @property
    def ray_cluster_name(self) -> str:
        rayjob = self.primary_rayjob
        return str(((rayjob or {}).get("status") or {}).get("rayClusterName") or "")

    def to_dict(self) -> JSONObject:
        """The recorded form (unit tests replay these)."""
        return {
            "name": self.name,
            "namespace": self.namespace,
            "job": self.job,
            "rayjob": self.rayjob,
            "workloads": self.workloads,
            "checkControllers": self.check_controllers,
            "pods": self.pods,
            "podsObserved": self.pods_observed,
            "claims": self.claims,
            "events": self.events,
            "queuePositions": self.positions,
            "queueAhead": self.ahead,
            "clusterQueues": self.cluster_queues,
        }

    @classmethod
    def from_dict(cls, data: JSONObject) -> Snapshot:
        return cls(
            name=data["name"],
            namespace=data["namespace"],
            job=data.get("job"),
            rayjob=data.get("rayjob"),
            workloads=list(data.get("workloads") or []),
            check_controllers=dict(data.get("checkControllers") or {}),
            pods=list(data.get("pods") or []),
            pods_observed=bool(data.get("podsObserved", bool(data.get("pods")))),
            claims=list(data.get("claims") or []),
            events=list(data.get("events") or []),
            positions=dict(data.get("queuePositions") or {}),
            ahead=dict(data.get("queueAhead") or {}),
            cluster_queues=dict(data.get("clusterQueues") or {}),
        )


class _Reader:
    def __init__(self, kube: ObjectReader, snapshot: Snapshot) -> None:
        self.kube = kube
        self.snap = snapshot
        self.errors: list[KubeError] = []

    def get(self, what: str, resource: Resource, name: str, namespace: str) -> JSONObject | None:
        return self._soft(what, lambda: self.kube.get(resource, name, namespace), keep=True)

    def path(self, what: str, path: str) -> JSONObject | None:
        return self._soft(what, lambda: self.kube.request("GET", path, what=what), keep=False)

    def _soft(
        self, what: str, read: Callable[[], JSONObject | None], *, keep: bool
    ) -> JSONObject | None:
        """One request whose failure is an observation; `keep` records it for `collect`."""
        self.snap.requests += 1
        try:
            obj = read()
        except NotFoundError as error:
            self.snap.observations[what] = (
                "resource type is not installed" if error.resource_missing else "notFound"
            )
            return None
        except KubeError as error:
            self.snap.observations[what] = f"unavailable: {error.one_line()}"
            if keep:
                self.errors.append(error)
            return None
        self.snap.observations[what] = "observed"
        return obj

    def list(
        self, what: str, resource: Resource, namespace: str, selector: str = ""
    ) -> list[JSONObject] | None:
        self.snap.requests += 1
        try:
            items = self.kube.list(resource, namespace, label_selector=selector)
        except NotFoundError as error:
            if error.resource_missing:
                self.snap.observations[what] = "resource type is not installed"
                return None
            raise
        except KubeError as error:
            self.snap.observations[what] = f"unavailable: {error.one_line()}"
            return None
        self.snap.observations[what] = "observed"
        return items


def collect(kube: ObjectReader, namespace: str, name: str) -> Snapshot:
    snap = Snapshot(name=name, namespace=namespace)
    read = _Reader(kube, snap)
    snap.job = read.get("job", JOBS, name, namespace)
    snap.rayjob = read.get("rayjob", RAY_JOBS, name, namespace)
    if not snap.found and read.errors:
        # Neither workload could be read (e.g. RBAC): "not found" would be a false answer.
        raise read.errors[0]
    _workloads(read, snap)
    _positions(read, snap)
    _pods(read, snap)
    _claims(read, snap)
    _events(read, snap)
    return snap


def _workloads(read: _Reader, snap: Snapshot) -> None:
    found = read.list("workloads", WORKLOADS, snap.namespace, f"{keys.JOB}={snap.name}") or []
    for owner in (snap.job, snap.rayjob):
        if found or owner is None:
            continue
        uid = owner["metadata"].get("uid", "")
        found = (
            read.list("workloads", WORKLOADS, snap.namespace, f"{keys.KUEUE_JOB_UID}={uid}") or []
        )
    snap.workloads = sorted(found, key=lambda w: w["metadata"]["name"])
    names = sorted(
        {
            check.get("name", "")
            for wl in snap.workloads
            for check in (wl.get("status") or {}).get("admissionChecks") or []
        }
        - {""}
    )
    for check in names:
        obj = read.get(f"admissioncheck/{check}", ADMISSION_CHECKS, check, "")
        snap.check_controllers[check] = str(
            ((obj or {}).get("spec") or {}).get("controllerName") or ""
        )


def _waiting(wl: JSONObject) -> bool:
    conditions = (wl.get("status") or {}).get("conditions") or []
    done = {c.get("type") for c in conditions if c.get("status") == "True"}
    return not done & {"QuotaReserved", "Admitted", "Finished"}


def _positions(read: _Reader, snap: Snapshot) -> None:
    """Kueue's own queue positions for the waiting workloads: one request per LocalQueue, only
    while something waits (soft: a cluster without the visibility API just has none)."""
    waiting = [wl for wl in snap.workloads if _waiting(wl)]
    queues = sorted({str((wl.get("spec") or {}).get("queueName") or "") for wl in waiting} - {""})
    names = {wl["metadata"]["name"] for wl in waiting}
    for queue in queues:
        body = read.path(
            "queuePosition",
            f"{VISIBILITY_API}/namespaces/{snap.namespace}/localqueues/{queue}/pendingworkloads",
        )
        items = (body or {}).get("items") or []
        for item in items:
            name = str((item.get("metadata") or {}).get("name") or "")
            if name in names:
                snap.positions[name] = item
                snap.ahead[name] = ahead_of(items, name)
        local = read.get(f"localqueue/{queue}", LOCAL_QUEUES, queue, snap.namespace)
        cluster_queue = str(((local or {}).get("spec") or {}).get("clusterQueue") or "")
        if cluster_queue:
            snap.cluster_queues[queue] = cluster_queue


def _pods(read: _Reader, snap: Snapshot) -> None:
    selectors = [f"{JOB_NAME}={snap.name}", f"{keys.JOB}={snap.name}"]
    if snap.ray_cluster_name:
        selectors.append(f"{keys.RAY_CLUSTER}={snap.ray_cluster_name}")
    seen: dict[str, dict[str, Any]] = {}
    for selector in selectors:
        items = read.list(f"pods {selector}", PODS, snap.namespace, selector)
        if items is None:
            continue
        snap.pods_observed = True
        for pod in items:
            seen.setdefault(pod["metadata"]["name"], pod)
    snap.pods = [seen[name] for name in sorted(seen)]


def claim_names(pods: list[JSONObject]) -> list[str]:
    names = set()
    for pod in pods:
        statuses = {
            s.get("name"): s.get("resourceClaimName")
            for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
        }
        for ref in (pod.get("spec") or {}).get("resourceClaims") or []:
            name = ref.get("resourceClaimName") or statuses.get(ref.get("name"))
            if name:
                names.add(name)
    return sorted(names)


def _claims(read: _Reader, snap: Snapshot) -> None:
    wanted = set(claim_names(snap.pods))
    if not wanted:
        return
    items = read.list("resourceclaims", RESOURCE_CLAIMS, snap.namespace) or []
    snap.claims = [c for c in items if c["metadata"]["name"] in wanted]


def _events(read: _Reader, snap: Snapshot) -> None:
    items = read.list("events", EVENTS, snap.namespace) or []
    related = {snap.name, snap.ray_cluster_name}
    related |= {w["metadata"]["name"] for w in snap.workloads}
    related |= {p["metadata"]["name"] for p in snap.pods}
    related |= {c["metadata"]["name"] for c in snap.claims}
    related.discard("")
    events = [e for e in items if (e.get("involvedObject") or {}).get("name") in related]
    snap.events = sorted(events, key=event_time)


def event_time(event: JSONObject) -> str:
    return str(
        event.get("lastTimestamp")
        or event.get("eventTime")
        or (event.get("metadata") or {}).get("creationTimestamp")
        or ""
    )

"""Kueue (Live): Kueue's own KueueViz frontend, served by the Portal over the Portal's watches.

KueueViz is a React app that reads a backend over WebSockets (`/ws/...`, one JSON document
per message, re-sent when the data changes), `/auth/status` and a YAML view at
`/api/<kind>/<name>`. The Portal implements that contract itself from the watch cache it
already keeps, so enabling KueueViz adds no Deployment, no Service and no second identity:
its pages show exactly what the Portal's ServiceAccount may read (the cluster-scoped
ClusterQueues, ResourceFlavors, Cohorts and Nodes; LocalQueues, Workloads, their Pods and
Events in the Portal's workspace namespaces), read-only.

The bundle (hack/setup/25-kueueviz.sh builds the upstream frontend for the `PREFIX` base) is
a directory of static files; its `env.js` points the app at this same host and path.

Quantities in ClusterQueue and LocalQueue quotas and usage are sent as numbers (cpu "500m"
is 0.5, memory "1Gi" is 1073741824), as the frontend's usage bars expect.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml
from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from tau import keys
from tau.errors import UsageError
from tau.kube.informer import ObjectCache
from tau.kube.resources import (
    CLUSTER_QUEUES,
    COHORTS,
    EVENTS,
    LOCAL_QUEUES,
    NODES,
    PODS,
    RESOURCE_FLAVORS,
    WORKLOADS,
    Resource,
)
from tau.lifecycle import objects as o
from tau.portal.web.queue import quantity

PREFIX = "/kueueviz"
SUBPROTOCOL = "kueueviz.v1"
LOGO = "kueueviz.png"
# How often an open socket checks the cache for a change (a generation counter: cheap).
POLL_SECONDS = 1.0
KINDS: dict[str, Resource] = {
    "workload": WORKLOADS,
    "localqueue": LOCAL_QUEUES,
    "clusterqueue": CLUSTER_QUEUES,
    "resourceflavor": RESOURCE_FLAVORS,
    "cohort": COHORTS,
}
WATCHED = (CLUSTER_QUEUES, COHORTS, LOCAL_QUEUES, NODES, PODS, EVENTS, RESOURCE_FLAVORS, WORKLOADS)
_OWNER = "platform operator (portal.kueueviz.enabled)"

Json = dict[str, Any]


class NotServed(Exception):
    """A KueueViz request for an object or path this Portal does not serve."""


def check_bundle(bundle: Path | None) -> Path:
    """The KueueViz bundle directory, refused unless it was built for `PREFIX`."""
    if bundle is None:
        raise UsageError(
            "--kueueviz needs the KueueViz frontend bundle: pass --kueueviz-bundle DIR or set "
            f"{keys.ENV_KUEUEVIZ_BUNDLE} (the Portal image sets it; hack/setup/25-kueueviz.sh "
            "builds it)",
            owner=_OWNER,
        )
    index = bundle / "index.html"
    if not index.is_file():
        raise UsageError(
            f"--kueueviz-bundle {bundle}: no index.html there; build the bundle with "
            "hack/setup/25-kueueviz.sh",
            owner=_OWNER,
        )
    if f'src="{PREFIX}/assets/' not in index.read_text(errors="replace"):
        raise UsageError(
            f"--kueueviz-bundle {bundle} was not built for the {PREFIX}/ path the Portal "
            "serves it under; rebuild it with hack/setup/25-kueueviz.sh",
            owner=_OWNER,
        )
    return bundle.resolve()


def watch(cache: ObjectCache, namespaces: tuple[str, ...]) -> None:
    """Add the informers KueueViz reads to the Portal's cache (before it starts)."""
    for resource in (CLUSTER_QUEUES, RESOURCE_FLAVORS, COHORTS, NODES):
        if not cache.holds(resource):
            cache.add(resource)
    for resource in (LOCAL_QUEUES, WORKLOADS, PODS, EVENTS):
        missing = [ns for ns in namespaces if not cache.holds(resource, ns)]
        if missing:
            cache.add(resource, missing)


# -- quantities and small readers -------------------------------------------------------------


def _number(value: Any) -> float | int:
    number = quantity(value)
    return int(number) if float(number).is_integer() else number


def _numeric_usage(flavors: list[Json] | None) -> list[Json]:
    return [
        {
            "name": flavor.get("name", ""),
            "resources": [
                {
                    **res,
                    "total": _number(res.get("total", 0)),
                    **({"borrowed": _number(res["borrowed"])} if "borrowed" in res else {}),
                }
                for res in flavor.get("resources") or []
            ],
        }
        for flavor in flavors or []
    ]


def _numeric_groups(groups: list[Json] | None) -> list[Json]:
    result = []
    for group in groups or []:
        flavors = []
        for flavor in group.get("flavors") or []:
            resources = []
            for res in flavor.get("resources") or []:
                row = {**res, "nominalQuota": _number(res.get("nominalQuota", 0))}
                for limit in ("borrowingLimit", "lendingLimit"):
                    if res.get(limit) is not None:
                        row[limit] = _number(res[limit])
                resources.append(row)
            flavors.append({**flavor, "resources": resources})
        result.append({**group, "flavors": flavors})
    return result


def _meta(obj: Json) -> Json:
    meta = dict(obj.get("metadata") or {})
    meta.pop("managedFields", None)
    return meta


def _namespace(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def _cohort_of(cq: Json) -> str:
    spec = cq.get("spec") or {}
    return str(spec.get("cohortName") or spec.get("cohort") or "")


@dataclass
class View:
    """What KueueViz may show: the cached objects in the Portal's scope."""

    namespaces: tuple[str, ...]
    cluster_queues: list[Json]
    local_queues: list[Json]
    workloads: list[Json]
    resource_flavors: list[Json]
    cohorts: list[Json]
    pods: list[Json]
    events: list[Json]
    nodes: list[Json]

    @classmethod
    def of(cls, cache: ObjectCache, namespaces: tuple[str, ...]) -> View:
        def namespaced(resource: Resource) -> list[Json]:
            return [obj for ns in namespaces for obj in cache.items(resource, ns)]

        return cls(
            namespaces=namespaces,
            cluster_queues=cache.items(CLUSTER_QUEUES),
            local_queues=namespaced(LOCAL_QUEUES),
            workloads=namespaced(WORKLOADS),
            resource_flavors=cache.items(RESOURCE_FLAVORS),
            cohorts=cache.items(COHORTS),
            pods=namespaced(PODS),
            events=namespaced(EVENTS),
            nodes=cache.items(NODES),
        )

    # -- queues ----------------------------------------------------------------------------

    def cluster_queue_row(self, cq: Json) -> Json:
        """A ClusterQueue as the list and dashboard pages read it (flat, numeric)."""
        spec, st = cq.get("spec") or {}, o.status(cq)
        groups = _numeric_groups(spec.get("resourceGroups"))
        return {
            "name": o.name(cq),
            "cohort": _cohort_of(cq),
            "flavors": [f.get("name", "") for g in groups for f in g.get("flavors") or []],
            "resourceGroups": groups,
            "flavorsUsage": _numeric_usage(st.get("flavorsUsage")),
            "admittedWorkloads": int(st.get("admittedWorkloads") or 0),
            "pendingWorkloads": int(st.get("pendingWorkloads") or 0),
            "reservingWorkloads": int(st.get("reservingWorkloads") or 0),
        }

    def cluster_queue_object(self, cq: Json) -> Json:
        """A ClusterQueue as its detail page reads it (the object, quantities numeric)."""
        spec, st = dict(cq.get("spec") or {}), dict(o.status(cq))
        spec["resourceGroups"] = _numeric_groups(spec.get("resourceGroups"))
        for key in ("flavorsUsage", "flavorsReservation"):
            st[key] = _numeric_usage(st.get(key))
        return {"name": o.name(cq), "metadata": _meta(cq), "spec": spec, "status": st}

    def local_queue_object(self, lq: Json) -> Json:
        st = dict(o.status(lq))
        # Kueue's v1beta1 spelling was flavorUsage; the pages read flavorsUsage.
        st["flavorsUsage"] = _numeric_usage(st.pop("flavorUsage", None) or st.get("flavorsUsage"))
        st["flavorsReservation"] = _numeric_usage(st.get("flavorsReservation"))
        return {
            "name": o.name(lq),
            "namespace": _namespace(lq),
            "metadata": _meta(lq),
            "spec": lq.get("spec") or {},
            "status": st,
        }

    def cluster_queues_payload(self) -> list[Json]:
        return [self.cluster_queue_row(cq) for cq in sorted(self.cluster_queues, key=o.name)]

    def cluster_queue_payload(self, name: str) -> Json:
        cq = self._find(self.cluster_queues, name, "ClusterQueue")
        queues = [
            {
                "name": o.name(lq),
                "namespace": _namespace(lq),
                "reservation": shown["status"]["flavorsReservation"],
                "usage": shown["status"]["flavorsUsage"],
            }
            for lq in self._local_queues_of(name)
            for shown in [self.local_queue_object(lq)]
        ]
        return {**self.cluster_queue_object(cq), "queues": queues}

    def local_queues_payload(self) -> list[Json]:
        return [self.local_queue_object(lq) for lq in self._sorted(self.local_queues)]

    def local_queue_payload(self, namespace: str, name: str) -> Json:
        return self.local_queue_object(self._find_namespaced(self.local_queues, namespace, name))

    def local_queue_workloads_payload(self, namespace: str, name: str) -> list[Json]:
        """The LocalQueue's admitted workloads (the page's "Admitted Workloads" table)."""
        self._find_namespaced(self.local_queues, namespace, name)
        return [
            self.workload_object(wl)
            for wl in self._sorted(self.workloads)
            if _namespace(wl) == namespace
            and (wl.get("spec") or {}).get("queueName") == name
            and o.is_true(wl, "Admitted")
        ]

    # -- workloads -------------------------------------------------------------------------

    def workload_object(self, wl: Json, pods: bool = False) -> Json:
        """A Workload as the pages read it: the object plus the owner references at the top
        level, the ClusterQueue it was admitted to (or its LocalQueue's), and whether it was
        preempted (Kueue's Evicted condition with reason Preempted)."""
        meta = _meta(wl)
        spec = wl.get("spec") or {}
        st = o.status(wl)
        evicted = next(
            (c for c in st.get("conditions") or [] if c.get("type") in ("Evicted", "Preempted")),
            None,
        )
        preempted = bool(
            evicted and evicted.get("status") == "True" and evicted.get("reason") == "Preempted"
        )
        row = {
            "metadata": meta,
            "spec": spec,
            "status": st,
            "ownerReferences": meta.get("ownerReferences") or [],
            "clusterQueueName": (st.get("admission") or {}).get("clusterQueue")
            or self._cluster_queue_of(_namespace(wl), str(spec.get("queueName") or "")),
            "preemption": {
                "preempted": preempted,
                "reason": (evicted or {}).get("message", "") if preempted else "",
            },
        }
        if pods:
            row["pods"] = self._pods_of(wl)
        return row

    def workloads_payload(self, namespace: str = "", pods: bool = False) -> Json:
        if namespace and namespace not in self.namespaces:
            raise NotServed(f"namespace {namespace!r} is not in this Portal's scope")
        chosen = [w for w in self._sorted(self.workloads) if namespace in ("", _namespace(w))]
        return {
            "items": [self.workload_object(w, pods=pods) for w in chosen],
            "workloads_by_uid": {
                str(_meta(w).get("uid")): f"{_namespace(w)}/{o.name(w)}"
                for w in chosen
                if _meta(w).get("uid")
            },
        }

    def workload_payload(self, namespace: str, name: str) -> Json:
        return self.workload_object(self._find_namespaced(self.workloads, namespace, name), True)

    def workload_events_payload(self, namespace: str, name: str) -> list[Json]:
        self._find_namespaced(self.workloads, namespace, name)
        rows = []
        for event in self.events:
            involved = event.get("involvedObject") or event.get("regarding") or {}
            if _namespace(event) != namespace or involved.get("kind") != "Workload":
                continue
            if involved.get("name") != name:
                continue
            meta = event.get("metadata") or {}
            # Events written by events.k8s.io/v1 carry eventTime only; the page needs a time.
            first = (
                event.get("firstTimestamp")
                or event.get("eventTime")
                or event.get("lastTimestamp")
                or meta.get("creationTimestamp")
            )
            rows.append(
                {
                    "name": meta.get("name", ""),
                    "namespace": namespace,
                    "type": event.get("type", ""),
                    "reason": event.get("reason", ""),
                    "message": event.get("message") or event.get("note", ""),
                    "count": int(event.get("count") or 1),
                    "firstTimestamp": first,
                    "lastTimestamp": event.get("lastTimestamp") or first,
                }
            )
        return rows

    def dashboard_payload(self, namespace: str = "") -> Json:
        queues = self.local_queues_payload()
        if namespace:
            queues = [q for q in queues if q["namespace"] == namespace]
        return {
            "queues": queues,
            "clusterQueues": self.cluster_queues_payload(),
            "workloads": self.workloads_payload(namespace, pods=True),
        }

    def namespaces_payload(self) -> Json:
        return {"namespaces": sorted(self.namespaces)}

    # -- flavors and cohorts ---------------------------------------------------------------

    def resource_flavors_payload(self) -> list[Json]:
        return [
            {"name": o.name(rf), "details": self._flavor_details(rf)}
            for rf in sorted(self.resource_flavors, key=o.name)
        ]

    def resource_flavor_payload(self, name: str) -> Json:
        rf = self._find(self.resource_flavors, name, "ResourceFlavor")
        details = self._flavor_details(rf)
        queues = []
        for cq in sorted(self.cluster_queues, key=o.name):
            quota = [
                {"resource": res.get("name", ""), "nominalQuota": str(res.get("nominalQuota", ""))}
                for group in (cq.get("spec") or {}).get("resourceGroups") or []
                for flavor in group.get("flavors") or []
                if flavor.get("name") == name
                for res in flavor.get("resources") or []
            ]
            if quota:
                queues.append({"queueName": o.name(cq), "quota": quota})
        wanted = details["nodeLabels"]
        nodes = [
            {
                "name": o.name(node),
                "labels": _meta(node).get("labels") or {},
                "taints": (node.get("spec") or {}).get("taints") or [],
            }
            for node in sorted(self.nodes, key=o.name)
            if all((_meta(node).get("labels") or {}).get(k) == v for k, v in wanted.items())
        ]
        return {"name": name, "details": details, "queues": queues, "nodes": nodes}

    def cohorts_payload(self) -> list[Json]:
        parents = {
            o.name(c): str((c.get("spec") or {}).get("parentName") or "") for c in self.cohorts
        }
        names = set(parents) | {_cohort_of(cq) for cq in self.cluster_queues} - {""}
        return [
            {
                "name": name,
                "parentName": parents.get(name, ""),
                "clusterQueues": [
                    {"name": o.name(cq)}
                    for cq in sorted(self.cluster_queues, key=o.name)
                    if _cohort_of(cq) == name
                ],
            }
            for name in sorted(names)
        ]

    def cohort_payload(self, name: str) -> Json:
        members = [cq for cq in sorted(self.cluster_queues, key=o.name) if _cohort_of(cq) == name]
        if not members and name not in {o.name(c) for c in self.cohorts}:
            raise NotServed(f"no Cohort {name!r}")
        return {"name": name, "clusterQueues": [self.cluster_queue_object(cq) for cq in members]}

    # -- the YAML view ---------------------------------------------------------------------

    def yaml_payload(self, kind: str, name: str, namespace: str) -> Json:
        resource = KINDS.get(kind)
        if resource is None:
            raise NotServed(f"KueueViz shows no kind {kind[:40]!r}")
        found: Json
        if resource.namespaced:
            pool = self.workloads if resource is WORKLOADS else self.local_queues
            found = self._find_namespaced(pool, namespace, name)
        else:
            pool = {
                "clusterqueue": self.cluster_queues,
                "resourceflavor": self.resource_flavors,
                "cohort": self.cohorts,
            }[kind]
            found = self._find(pool, name, resource.kind)
        shown = copy.deepcopy(found)
        shown["metadata"] = _meta(found)
        return {"content": yaml.safe_dump(shown, sort_keys=False)}

    # -- helpers ---------------------------------------------------------------------------

    def _flavor_details(self, rf: Json) -> Json:
        spec = rf.get("spec") or {}
        return {
            "nodeLabels": spec.get("nodeLabels") or {},
            "nodeTaints": spec.get("nodeTaints") or [],
            "tolerations": spec.get("tolerations") or [],
        }

    def _local_queues_of(self, cluster_queue: str) -> list[Json]:
        return [
            lq
            for lq in self._sorted(self.local_queues)
            if (lq.get("spec") or {}).get("clusterQueue") == cluster_queue
        ]

    def _cluster_queue_of(self, namespace: str, local_queue: str) -> str:
        for lq in self.local_queues:
            if _namespace(lq) == namespace and o.name(lq) == local_queue:
                return str((lq.get("spec") or {}).get("clusterQueue") or "")
        return ""

    def _pods_of(self, wl: Json) -> list[Json]:
        owners = {
            (ref.get("kind"), ref.get("name")) for ref in _meta(wl).get("ownerReferences") or []
        }
        rows = []
        for pod in self.pods:
            if _namespace(pod) != _namespace(wl):
                continue
            refs = {(r.get("kind"), r.get("name")) for r in _meta(pod).get("ownerReferences") or []}
            if refs & owners:
                st = o.status(pod)
                rows.append(
                    {
                        "name": o.name(pod),
                        "status": {
                            "phase": st.get("phase", ""),
                            "conditions": st.get("conditions") or [],
                        },
                    }
                )
        return sorted(rows, key=lambda p: p["name"])

    def _sorted(self, items: list[Json]) -> list[Json]:
        return sorted(items, key=lambda obj: (_namespace(obj), o.name(obj)))

    def _find(self, items: list[Json], name: str, kind: str) -> Json:
        for obj in items:
            if o.name(obj) == name:
                return obj
        raise NotServed(f"no {kind} {name[:80]!r}")

    def _find_namespaced(self, items: list[Json], namespace: str, name: str) -> Json:
        if namespace not in self.namespaces:
            raise NotServed(f"namespace {namespace[:80]!r} is not in this Portal's scope")
        for obj in items:
            if _namespace(obj) == namespace and o.name(obj) == name:
                return obj
        raise NotServed(f"no {name[:80]!r} in namespace {namespace!r}")


# -- the WebSocket paths ----------------------------------------------------------------------

_NAME = r"([^/]+)"
_ROUTES: list[tuple[re.Pattern[str], Callable[[View, Json, tuple[str, ...]], Any]]] = [
    (re.compile(r"namespaces"), lambda v, q, a: v.namespaces_payload()),
    (re.compile(r"workloads"), lambda v, q, a: {"workloads": v.workloads_payload(q["ns"])}),
    (re.compile(r"workloads/dashboard"), lambda v, q, a: v.dashboard_payload(q["ns"])),
    (re.compile(rf"workload/{_NAME}/{_NAME}"), lambda v, q, a: v.workload_payload(*a)),
    (
        re.compile(rf"workload/{_NAME}/{_NAME}/events"),
        lambda v, q, a: v.workload_events_payload(*a),
    ),
    (re.compile(r"cluster-queues"), lambda v, q, a: v.cluster_queues_payload()),
    (re.compile(rf"cluster-queue/{_NAME}"), lambda v, q, a: v.cluster_queue_payload(*a)),
    (re.compile(r"local-queues"), lambda v, q, a: v.local_queues_payload()),
    (re.compile(rf"local-queue/{_NAME}/{_NAME}"), lambda v, q, a: v.local_queue_payload(*a)),
    (
        re.compile(rf"local-queue/{_NAME}/{_NAME}/workloads"),
        lambda v, q, a: v.local_queue_workloads_payload(*a),
    ),
    (re.compile(r"resource-flavors"), lambda v, q, a: v.resource_flavors_payload()),
    (re.compile(rf"resource-flavor/{_NAME}"), lambda v, q, a: v.resource_flavor_payload(*a)),
    (re.compile(r"cohorts"), lambda v, q, a: v.cohorts_payload()),
    (re.compile(rf"cohort/{_NAME}"), lambda v, q, a: v.cohort_payload(*a)),
]


def payload(view: View, path: str, query: str = "") -> Any:
    """The JSON document KueueViz's socket at `/ws/<path>?<query>` receives."""
    params = {"ns": (parse_qs(query).get("namespace") or [""])[0]}
    for pattern, build in _ROUTES:
        match = pattern.fullmatch(path)
        if match:
            return build(view, params, match.groups())
    raise NotServed(f"KueueViz has no socket /ws/{path[:80]}")


def _same_origin(origin: str | None, host: str | None) -> bool:
    """A browser's socket must come from a page this Portal served (the Host check alone lets
    any page that can reach the Portal open a socket: cross-site WebSocket hijacking)."""
    if origin is None:
        return True  # not a browser: curl, a test client
    netloc = urlsplit(origin).netloc
    return bool(host) and netloc.lower() == str(host).lower()


def mount(app: FastAPI, portal: Any, bundle: Path) -> None:
    """Add KueueViz's pages (`PREFIX/...`), sockets (`PREFIX/ws/...`), `PREFIX/auth/status`
    and YAML view (`/api/<kind>/<name>`) to the Portal app, before its catch-all mount."""
    namespaces = tuple(portal.config.namespaces)
    cache: ObjectCache = portal.cache
    index = bundle / "index.html"

    def view() -> View:
        return View.of(cache, namespaces)

    def not_served(error: Exception) -> Response:
        body = json.dumps({"reason": str(error)})
        return Response(body, status_code=404, media_type="application/json")

    @app.websocket(PREFIX + "/ws/{path:path}")
    async def socket(websocket: WebSocket, path: str) -> None:
        if not _same_origin(websocket.headers.get("origin"), websocket.headers.get("host")):
            await websocket.close(code=1008)
            return
        offered = websocket.headers.get("sec-websocket-protocol", "")
        protocols = [p.strip() for p in offered.split(",") if p.strip()]
        await websocket.accept(subprotocol=SUBPROTOCOL if SUBPROTOCOL in protocols else None)
        query = websocket.url.query
        try:
            first = payload(view(), path, query)
        except NotServed as error:
            await websocket.send_text(json.dumps({"error": str(error)}))
            await websocket.close(code=1008)
            return
        last = json.dumps(first, separators=(",", ":"), default=str)
        await websocket.send_text(last)
        seen = cache.generation(*WATCHED)
        closed = asyncio.ensure_future(websocket.receive())
        try:
            while True:
                done, _ = await asyncio.wait({closed}, timeout=POLL_SECONDS)
                if done:
                    message = closed.result()
                    if message.get("type") == "websocket.disconnect":
                        return
                    closed = asyncio.ensure_future(websocket.receive())
                    continue
                now = cache.generation(*WATCHED)
                if now == seen:
                    continue
                seen = now
                try:
                    text = json.dumps(
                        payload(view(), path, query), separators=(",", ":"), default=str
                    )
                except NotServed as error:
                    text = json.dumps({"error": str(error)})
                if text != last:
                    last = text
                    await websocket.send_text(text)
        except (WebSocketDisconnect, RuntimeError, OSError):
            # The page went away mid-send (uvicorn raises ClientDisconnected, an OSError).
            return
        finally:
            closed.cancel()

    @app.get(PREFIX + "/auth/status", include_in_schema=False)
    def auth_status() -> Response:
        # No application login: the Portal is ClusterIP-only behind network access control.
        return Response(json.dumps({"authMode": "Disabled"}), media_type="application/json")

    def yaml_route(kind: str) -> None:
        # One route per kind: /api/stellar/... and /api/portal/... stay the Portal's own.
        @app.get(f"/api/{kind}/{{name}}", include_in_schema=False)
        def yaml_view(name: str, namespace: str = "", output: str = "yaml") -> Response:
            try:
                body = view().yaml_payload(kind, name, namespace)
            except NotServed as error:
                return not_served(error)
            return Response(json.dumps(body), media_type="application/json")

    for kind in KINDS:
        yaml_route(kind)

    @app.get("/" + LOGO, include_in_schema=False)
    def logo() -> Response:
        # The app's navigation bar names its logo at the site root (src="/kueueviz.png").
        return FileResponse(bundle / LOGO, headers={"Cache-Control": "max-age=3600"})

    @app.get(PREFIX, include_in_schema=False)
    def kueueviz_root() -> RedirectResponse:
        return RedirectResponse(PREFIX + "/", status_code=302)

    @app.get(PREFIX + "/{path:path}", include_in_schema=False)
    def kueueviz_page(path: str) -> Response:
        if path:
            asset = (bundle / path).resolve()
            if asset.is_file() and bundle in asset.parents:
                cache_control = "max-age=3600" if path.startswith("assets/") else "no-cache"
                return FileResponse(asset, headers={"Cache-Control": cache_control})
            if "." in path.rsplit("/", 1)[-1]:
                return not_served(NotServed(f"no file {path[:80]!r}"))
        # A client-side route (/kueueviz/cluster-queues, ...): the app's shell.
        return HTMLResponse(index.read_text(), headers={"Cache-Control": "no-cache"})

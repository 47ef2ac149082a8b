"""A watch-fed, in-memory copy of objects (the Portal's boards, the lifecycle recorder).

Each (type, namespace) a reader needs has one informer: a paginated LIST once, then one
long WATCH from the list's resourceVersion (bookmarks keep it current; a 410 Gone relists).
A page load (or a recorder pass) reads these copies and sends no request to the API server,
so its cost does not grow with the number of objects.

`ObjectCache` answers `get` and `list` like `tau.kube.KubeClient`, so the lifecycle code that
builds `tau run status` (`tau.lifecycle.snapshot.collect`) runs unchanged over the cache:
the run page's phase tree is the CLI's, from the same functions. Types the cache does not
hold fall through to the API server.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tau.jsontypes import JSONObject
from tau.kube import AuthorizationError, KubeClient, KubeError, NotFoundError, Resource
from tau.kube.client import DEFAULT_TIMEOUT_SECONDS, METADATA_LIST_ONLY
from tau.kube.stream import watch

PAGE_SIZE = 500
WATCH_SECONDS = 240
RETRY_SECONDS = 5.0
MISSING_RETRY_SECONDS = 60.0

SYNCING, SYNCED, MISSING, FORBIDDEN, FAILING = (
    "syncing",
    "synced",
    "type not installed",
    "forbidden",
    "failing",
)


WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def request_kind(method: str, path: str, query: list[tuple[str, str]] | None) -> tuple[str, str]:
    """(Kubernetes verb, resource[/subresource]) of one request, named as the API server's
    audit log names them; a non-resource path (`/version`) is its own resource."""
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        rest = parts[2:]
    elif parts[0] == "apis":
        rest = parts[3:]
    else:
        return method.lower(), path
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    resource = "/".join(rest[:1] + rest[2:3])
    if method != "GET":
        return WRITE_VERBS.get(method, method.lower()), resource
    if ("watch", "1") in (query or []):
        return "watch", resource
    return ("get" if len(rest) > 1 else "list"), resource


class CountingClient(KubeClient):
    """A KubeClient that counts the HTTP exchanges it makes, in total and by verb and
    resource (the benchmarks' and tests' measure of API-server load; the controller's
    /metrics)."""

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        context: str = "",
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        super().__init__(kubeconfig, context, timeout=timeout)
        self.requests = 0
        self.kinds: Counter[tuple[str, str]] = Counter()
        self._count_lock = threading.Lock()

    def _sent(self, method: str, path: str, query: list[tuple[str, str]] | None) -> None:
        with self._count_lock:
            self.requests += 1
            self.kinds[request_kind(method, path, query)] += 1


def matches(labels: dict[str, str], selector: str) -> bool:
    """Equality-based label selectors (`a=b`, `a==b`, `a!=b`, `a`, `!a`), comma-joined."""
    for term in (t.strip() for t in selector.split(",")):
        if not term:
            continue
        if "!=" in term:
            key, value = (p.strip() for p in term.split("!=", 1))
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = (p.strip() for p in term.replace("==", "=").split("=", 1))
            if labels.get(key) != value:
                return False
        elif term.startswith("!"):
            if term[1:].strip() in labels:
                return False
        elif term not in labels:
            return False
    return True


@dataclass
class Informer:
    """One (type, namespace), optionally narrowed by selectors, kept current by LIST + WATCH
    in a daemon thread.

    With `metadata_only` the objects are their metadata (the API server's
    PartialObjectMetadata, under the type's own kind and apiVersion): for a reader of names
    and labels, it decodes and holds a third of a Node's JSON.
    """

    kube: KubeClient
    resource: Resource
    namespace: str = ""
    on_change: Callable[[str, dict[str, Any]], None] | None = None
    label_selector: str = ""
    field_selector: str = ""
    metadata_only: bool = False
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    state: str = SYNCING
    detail: str = ""
    resource_version: str = ""
    generation: int = 0  # bumped on every change: readers rebuild derived views only then
    synced: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.resource.display, self.namespace)

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name=f"informer {self.resource.display}/{self.namespace}", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def snapshot(self) -> list[JSONObject]:
        with self._lock:
            return list(self.items.values())

    def get(self, name: str) -> JSONObject | None:
        """By name; an all-namespaces informer of a namespaced type keys `namespace/name`."""
        with self._lock:
            return self.items.get(name)

    @property
    def all_namespaces(self) -> bool:
        return self.resource.namespaced and not self.namespace

    def key_of(self, obj: JSONObject) -> str:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        return f"{meta.get('namespace') or ''}/{name}" if self.all_namespaces else name

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._relist()
                while not self._stop.is_set() and self._watch_once():
                    pass
            except NotFoundError as error:
                self._fail(MISSING if error.resource_missing else FAILING, error)
                self._stop.wait(MISSING_RETRY_SECONDS if error.resource_missing else RETRY_SECONDS)
            except AuthorizationError as error:
                self._fail(FORBIDDEN, error)
                self._stop.wait(MISSING_RETRY_SECONDS)
            except (KubeError, ValueError, OSError) as error:
                self._fail(FAILING, error)
                self._stop.wait(RETRY_SECONDS)

    def _fail(self, state: str, error: Exception) -> None:
        self.state = state
        self.detail = error.one_line() if isinstance(error, KubeError) else type(error).__name__
        if state in (MISSING, FORBIDDEN):
            with self._lock:
                self.items = {}
                self.generation += 1
            self.synced.set()

    def _relist(self) -> None:
        items: dict[str, dict[str, Any]] = {}
        token = ""
        while True:
            query = [("limit", str(PAGE_SIZE))] + ([("continue", token)] if token else [])
            query += [
                (key, value)
                for key, value in (
                    ("labelSelector", self.label_selector),
                    ("fieldSelector", self.field_selector),
                )
                if value
            ]
            body = self.kube.request(
                "GET",
                self.resource.path(self.namespace),
                what=f"list {self.resource.display}",
                query=query,
                accept=METADATA_LIST_ONLY if self.metadata_only else "application/json",
            )
            for obj in body.get("items") or []:
                self._typed(obj)
                items[self.key_of(obj)] = obj
            meta = body.get("metadata") or {}
            token = str(meta.get("continue") or "")
            if not token:
                self.resource_version = str(meta.get("resourceVersion") or "")
                break
        with self._lock:
            old, self.items = self.items, items
            self.generation += 1
        self.state, self.detail = SYNCED, ""
        self.synced.set()
        if self.on_change is not None:
            for name in set(old) | set(items):
                if old.get(name) is not items.get(name):
                    self.on_change("SYNC", items.get(name) or old[name])

    def _typed(self, obj: JSONObject) -> None:
        if self.metadata_only:
            obj["kind"], obj["apiVersion"] = self.resource.kind, self.resource.api_version
        else:
            obj.setdefault("kind", self.resource.kind)
            obj.setdefault("apiVersion", self.resource.api_version)

    def _watch_once(self) -> bool:
        """Follow one watch stream; False when the cache must be relisted (410 Gone)."""
        for event in watch(
            self.kube,
            self.resource,
            self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            resource_version=self.resource_version,
            timeout_seconds=WATCH_SECONDS,
            metadata_only=self.metadata_only,
        ):
            if self._stop.is_set():
                return True
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    return False
                raise ValueError(f"watch error {obj.get('code')}: {obj.get('message', '')}")
            version = str((obj.get("metadata") or {}).get("resourceVersion") or "")
            if version:
                self.resource_version = version
            if kind == "BOOKMARK":
                continue
            self._typed(obj)
            with self._lock:
                if kind == "DELETED":
                    self.items.pop(self.key_of(obj), None)
                else:
                    self.items[self.key_of(obj)] = obj
                self.generation += 1
            if self.on_change is not None:
                self.on_change(str(kind), obj)
        return True


class ObjectCache:
    """Informers for a fixed set of (type, namespace) pairs, read like a KubeClient."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube
        self.informers: dict[tuple[str, str], Informer] = {}

    def add(
        self,
        resource: Resource,
        namespaces: Iterable[str] = ("",),
        on_change: Callable[[str, JSONObject], None] | None = None,
        *,
        metadata_only: bool = False,
    ) -> None:
        for namespace in namespaces if resource.namespaced else ("",):
            informer = Informer(
                self.kube, resource, namespace, on_change, metadata_only=metadata_only
            )
            self.informers[informer.key] = informer

    def start(self) -> None:
        for informer in self.informers.values():
            informer.start()

    def stop(self) -> None:
        for informer in self.informers.values():
            informer.stop()

    def wait_synced(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for informer in self.informers.values():
            if not informer.synced.wait(max(0.0, deadline - time.monotonic())):
                return False
        return True

    def generation(self, *resources: Resource) -> int:
        """Changes any informer of these types has seen (a cheap "did anything change")."""
        return sum(i.generation for i in self.informers.values() if i.resource in resources)

    def holds(self, resource: Resource, namespace: str = "") -> bool:
        return (resource.display, namespace if resource.namespaced else "") in self.informers

    def informer(self, resource: Resource, namespace: str = "") -> Informer | None:
        """The informer holding `namespace` of a type: its own, else an all-namespaces one."""
        own = self.informers.get((resource.display, namespace if resource.namespaced else ""))
        return own or self.informers.get((resource.display, ""))

    def status(self) -> list[dict[str, str]]:
        return [
            {"resource": i.resource.display, "namespace": i.namespace, "state": i.state}
            | ({"detail": i.detail} if i.detail else {})
            for i in self.informers.values()
        ]

    def items(self, resource: Resource, namespace: str = "") -> list[JSONObject]:
        """Every cached object of a type: of one namespace, or (namespace "") of all held."""
        if not resource.namespaced or namespace:
            found = self.informer(resource, namespace)
            return _in_namespace(found, namespace) if found else []
        return [
            obj
            for informer in self.informers.values()
            if informer.resource == resource
            for obj in informer.snapshot()
        ]

    # -- the KubeClient reading surface --------------------------------------------------

    def get(self, resource: Resource, name: str, namespace: str = "") -> JSONObject:
        informer = self.informer(resource, namespace)
        if informer is None:
            return self.kube.get(resource, name, namespace)
        _raise_unusable(informer)
        obj = informer.get(f"{namespace}/{name}" if informer.all_namespaces else name)
        if obj is None:
            raise NotFoundError(f"{resource.display} {name!r} does not exist")
        return obj

    def list(
        self,
        resource: Resource,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[JSONObject]:
        informer = self.informer(resource, namespace)
        if informer is None or field_selector:
            return self.kube.list(
                resource, namespace, label_selector=label_selector, field_selector=field_selector
            )
        _raise_unusable(informer)
        return [
            obj
            for obj in _in_namespace(informer, namespace)
            if matches((obj.get("metadata") or {}).get("labels") or {}, label_selector)
        ]

    def __getattr__(self, name: str) -> object:
        # Anything else a lifecycle reader needs (pod logs, transport) is the real client's.
        return getattr(self.kube, name)


def _in_namespace(informer: Informer, namespace: str) -> list[JSONObject]:
    objects = informer.snapshot()
    if not (informer.all_namespaces and namespace):
        return objects
    return [o for o in objects if (o.get("metadata") or {}).get("namespace") == namespace]


def _raise_unusable(informer: Informer) -> None:
    if informer.state == MISSING:
        raise NotFoundError(
            f"{informer.resource.display} is not served: {informer.detail}", resource_missing=True
        )
    if informer.state == FORBIDDEN:
        raise AuthorizationError(informer.detail)


class WatchedReads:
    """Reads like a KubeClient, each distinct read served by its own informer.

    The first `get(resource, name)` or `list(resource, selector)` starts an informer for
    exactly that read (a GET becomes a LIST + WATCH narrowed to the name) and waits for its
    first LIST; every later identical read is answered from memory. So a reader that
    repeats the same reads — `tau run status --watch` re-collecting a run's snapshot — costs
    one LIST and one long WATCH per read, however often it refreshes, and `changed` tells it
    when to refresh. A read whose type may not be listed or watched by this identity (RBAC
    that grants only `get`) is sent to the API server each time instead.
    """

    def __init__(self, kube: KubeClient, *, sync_timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self.kube = kube
        self.sync_timeout = sync_timeout
        self.changed = threading.Event()
        self.informers: dict[tuple[str, str, str, str], Informer] = {}

    def _informer(
        self, resource: Resource, namespace: str, label_selector: str, field_selector: str
    ) -> Informer | None:
        """The synced informer for this read; None when the read must go to the API server."""
        namespace = namespace if resource.namespaced else ""
        key = (resource.display, namespace, label_selector, field_selector)
        informer = self.informers.get(key)
        if informer is None:
            informer = Informer(
                self.kube,
                resource,
                namespace,
                on_change=lambda _kind, _obj: self.changed.set(),
                label_selector=label_selector,
                field_selector=field_selector,
            )
            self.informers[key] = informer
            informer.start()
        deadline = time.monotonic() + self.sync_timeout
        while not informer.synced.wait(0.02):
            if informer.state == FAILING or time.monotonic() >= deadline:
                return None
        return None if informer.state == FORBIDDEN else informer

    def get(self, resource: Resource, name: str, namespace: str = "") -> JSONObject:
        informer = self._informer(resource, namespace, "", f"metadata.name={name}")
        if informer is None:
            return self.kube.get(resource, name, namespace)
        _raise_unusable(informer)
        obj = informer.get(name)
        if obj is None:
            raise NotFoundError(f"{resource.display} {name!r} does not exist")
        return obj

    def list(
        self,
        resource: Resource,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[JSONObject]:
        informer = self._informer(resource, namespace, label_selector, field_selector)
        if informer is None:
            return self.kube.list(
                resource, namespace, label_selector=label_selector, field_selector=field_selector
            )
        _raise_unusable(informer)
        return informer.snapshot()

    def request(self, method: str, path: str, *, what: str) -> JSONObject:
        """A read that cannot be watched (Kueue's visibility API) goes to the API server."""
        return self.kube.request(method, path, what=what)

    def stop(self) -> None:
        for informer in self.informers.values():
            informer.stop()

"""`tau run history record`: the metadata-only daemon that writes lifecycle rows.

It watches Jobs, RayJobs and Kueue Workloads of one namespace (one informer each, see
`tau.kube.informer`), and after every change, and at least every `interval`, derives each
TauGrid run's current row (`tau.lifecycle.recorder`). A row is emitted when a run's state or
reason changes; terminal states are final. The last row per run is seeded from the sink at
start, so a restarted recorder does not repeat transitions it already wrote, and a run deleted
while it was down is recorded `cancelled`. Writes go through the sinks (the workspace store,
ADX); a failed write keeps its rows and is retried on the next pass.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from tau.errors import TauError
from tau.jsontypes import JSONObject
from tau.kube import KubeClient, KubeError
from tau.kube.informer import MISSING, SYNCED, ObjectCache
from tau.kube.resources import JOBS, PODS, RAY_JOBS, WORKLOADS
from tau.lifecycle import recorder as rec
from tau.lifecycle.runs import is_tau

SYNC_SECONDS = 60.0


class Sink(Protocol):
    name: str

    def seed(self, scope: rec.Scope) -> dict[str, JSONObject]:
        """The last row per durable id this sink holds for the scope ({} when unreadable)."""

    def write(self, rows: list[JSONObject]) -> None:
        """Store rows durably (idempotent on observation_id); raise TauError on failure."""


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _owner(wl: JSONObject) -> tuple[str, str]:
    for ref in (wl.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") in ("Job", "RayJob"):
            return ref["kind"], ref.get("name", "")
    return "", ""


class Recorder:
    def __init__(
        self,
        kube: KubeClient,
        scope: rec.Scope,
        sinks: list[Sink],
        *,
        interval: float = 30.0,
        say: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.kube, self.scope, self.sinks = kube, scope, sinks
        self.interval, self.say = interval, say
        self.cache = ObjectCache(kube)
        self.changed = threading.Event()
        for resource in (JOBS, RAY_JOBS, WORKLOADS):
            self.cache.add(resource, (scope.namespace,), lambda *_: self.changed.set())
        self.last: dict[str, dict[str, Any]] = {}
        self.pending: list[dict[str, Any]] = []
        self.last_error = ""
        self.written = 0
        self._stop = threading.Event()

    # -- one pass ------------------------------------------------------------------------

    def seed(self) -> None:
        for sink in self.sinks:
            for durable, row in sink.seed(self.scope).items():
                seen = self.last.get(durable)
                if seen is None or str(row["observed_at"]) >= str(seen["observed_at"]):
                    self.last[durable] = row

    def _pods(self, name: str) -> list[JSONObject]:
        """Pods of a failed Job, for its failure reason; none when they cannot be read (the
        chart's Role is metadata-only: Jobs, RayJobs and Workloads)."""
        try:
            return self.kube.list(PODS, self.scope.namespace, label_selector=f"job-name={name}")
        except KubeError:
            return []

    def observe(self, observed_at: str | None = None) -> list[JSONObject]:
        """Derive rows for every change since the last pass and queue them for writing."""
        at = observed_at or now()
        workloads: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for wl in self.cache.items(WORKLOADS, self.scope.namespace):
            workloads.setdefault(_owner(wl), []).append(wl)
        seen: set[str] = set()
        emitted: list[dict[str, Any]] = []
        for kind, resource in (("Job", JOBS), ("RayJob", RAY_JOBS)):
            for obj in self.cache.items(resource, self.scope.namespace):
                meta = obj.get("metadata") or {}
                owners = meta.get("ownerReferences") or []
                if not is_tau(obj) or any(r.get("kind") == "RayJob" for r in owners):
                    continue
                base = rec.identity(kind, obj, self.scope)
                durable = base["durable_id"]
                seen.add(durable)
                version = str(meta.get("resourceVersion") or "")
                last = self.last.get(durable)
                if last is None:
                    last = rec.receipt(base, at, version)
                    emitted.append(last)
                if last["state"] in rec.TERMINAL:
                    self.last[durable] = last
                    continue
                fields = rec.current(kind, obj, workloads.get((kind, meta.get("name", "")), []), [])
                if fields["state"] == "failed" and kind == "Job":
                    fields = rec.current(
                        kind,
                        obj,
                        workloads.get((kind, meta.get("name", "")), []),
                        self._pods(meta.get("name", "")),
                    )
                if (fields["state"], fields["reason"]) != (last["state"], last["reason"]):
                    last = rec.row(base, fields, at, version)
                    emitted.append(last)
                self.last[durable] = last
        informers = [self.cache.informer(r, self.scope.namespace) for r in (JOBS, RAY_JOBS)]
        if all(i is not None and i.state in (SYNCED, MISSING) for i in informers):
            for durable in [d for d in self.last if d not in seen]:
                gone = rec.deleted(self.last[durable], at)
                if gone is not None and self._in_scope(gone):
                    emitted.append(gone)
                    self.last[durable] = gone
        self.pending.extend(emitted)
        return emitted

    def _in_scope(self, row: JSONObject) -> bool:
        return (
            row.get("namespace") == self.scope.namespace
            and row.get("cluster") == self.scope.cluster
        )

    def flush(self) -> bool:
        if not self.pending:
            return True
        batch = list(self.pending)
        for sink in self.sinks:
            try:
                sink.write(batch)
            except TauError as error:
                self.last_error = f"{sink.name}: {error.one_line()}"
                self.say(f"lifecycle recorder: write failed, will retry: {self.last_error}")
                return False
        del self.pending[: len(batch)]
        self.written += len(batch)
        self.last_error = ""
        for row in batch:
            self.say(
                f"recorded {row['owning_resource_kind']}/{row['owning_resource_name']} "
                f"{row['state']}" + (f" ({row['reason']})" if row["reason"] else "")
            )
        return True

    # -- the daemon ------------------------------------------------------------------------

    def ready(self) -> bool:
        synced = all(i.state in (SYNCED, MISSING) for i in self.cache.informers.values())
        return synced and not self.pending

    def stop(self) -> None:
        """Finish the current pass, write what is pending, and return from `run`."""
        self._stop.set()
        self.changed.set()

    def run(self, *, once: bool = False) -> int:
        self.seed()
        self.cache.start()
        try:
            if not self.cache.wait_synced(SYNC_SECONDS):
                states = ", ".join(
                    f"{s['resource']}: {s['state']}"
                    + (f" ({s['detail']})" if "detail" in s else "")
                    for s in self.cache.status()
                )
                raise KubeError(
                    f"the recorder's watches did not sync in {SYNC_SECONDS:g}s: {states}"
                )
            while True:
                self.changed.clear()
                self.observe()
                flushed = self.flush()
                if once:
                    return 0 if flushed else 1
                self.changed.wait(self.interval)
                if self._stop.is_set():
                    return 0 if self.flush() else 1
                time.sleep(0.2)  # coalesce a burst of watch events into one pass
        finally:
            self.cache.stop()
            self.flush()


def serve_health(recorder: Recorder, addr: str) -> ThreadingHTTPServer:
    """`/healthz` (alive) and `/readyz` (synced, nothing waiting to be written) on HOST:PORT."""
    host, _, port = addr.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body: dict[str, Any]
            if self.path == "/healthz":
                code, body = 200, {"status": "ok"}
            elif self.path == "/readyz":
                ready = recorder.ready()
                code = 200 if ready else 503
                body = {
                    "ready": ready,
                    "pending": len(recorder.pending),
                    "written": recorder.written,
                    "lastError": recorder.last_error,
                }
            else:
                code, body = 404, {"reason": f"no route {self.path[:80]!r}"}
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer((host or "0.0.0.0", int(port)), Handler)
    threading.Thread(target=server.serve_forever, name="recorder health", daemon=True).start()
    return server

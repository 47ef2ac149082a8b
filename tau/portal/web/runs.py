"""The Runs board: TauGrid-managed Jobs and RayJobs of the workspace, live and from history.

Live rows come from the watch cache through the same row builder as `tau run list`
(`tau.lifecycle.runs.list_runs`); each row is memoized by (uid, resourceVersion), so a board
over 10,000 runs rebuilds only what changed. Durable history (the lifecycle recorder's rows
in the workspace store) keeps runs visible after their objects are deleted; live and history
rows merge by durable id, then resource UID, then run id.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

from tau import keys
from tau.errors import TauError
from tau.kube.resources import JOBS, RAY_JOBS, Resource
from tau.lifecycle import runs as lifecycle_runs
from tau.lifecycle.recorder import durable_id

HISTORY_AVAILABLE, LIVE_ONLY, HISTORY_UNAVAILABLE = "available", "live-only", "history-unavailable"
TRACKING = {True: "tracked", False: "untracked"}
STATE_OF_HISTORY = {
    "submitted": "Pending",
    "queued": "Suspended",
    "admitted": "Pending",
    "running": "Running",
    "succeeded": "Complete",
    "failed": "Failed",
    "cancelled": "Cancelled",
}


def gpus(obj: dict[str, Any]) -> int:
    """GPUs a run asks for: the rendered gpu-count annotation, else its pod templates."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if str(annotations.get(keys.GPU_COUNT, "")).isdigit():
        return int(annotations[keys.GPU_COUNT])
    spec = obj.get("spec") or {}
    if obj.get("kind") == "RayJob":
        cluster = spec.get("rayClusterSpec") or {}
        groups = [(cluster.get("headGroupSpec") or {}, 1)]
        groups += [
            (g, int(g.get("replicas") or g.get("minReplicas") or 0) * int(g.get("numOfHosts") or 1))
            for g in cluster.get("workerGroupSpecs") or []
        ]
        return sum(_template_gpus(g.get("template") or {}) * count for g, count in groups)
    return _template_gpus(spec.get("template") or {}) * int(spec.get("parallelism") or 1)


def _template_gpus(template: dict[str, Any]) -> int:
    total = 0
    for container in (template.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        value = (resources.get("limits") or {}).get(keys.NVIDIA_GPU) or (
            resources.get("requests") or {}
        ).get(keys.NVIDIA_GPU)
        count = str(value or "")
        if count.isdigit():
            total += int(count)
    return total


class RowMemo:
    """Board rows per object, rebuilt only when the object's resourceVersion changes (used
    under `RunsIndex`'s lock)."""

    def __init__(self, cluster: str) -> None:
        self.cluster = cluster
        self._rows: dict[str, tuple[str, dict[str, Any] | None]] = {}

    def row(self, obj: dict[str, Any], namespace: str) -> dict[str, Any] | None:
        meta = obj.get("metadata") or {}
        key = meta.get("uid") or f"{namespace}/{obj.get('kind')}/{meta.get('name')}"
        version = str(meta.get("resourceVersion") or "")
        hit = self._rows.get(key)
        if hit is not None and hit[0] == version:
            return hit[1]
        built = self._build(obj, namespace)
        self._rows[key] = (version, built)
        return built

    def _build(self, obj: dict[str, Any], namespace: str) -> dict[str, Any] | None:
        kind = obj.get("kind") or "Job"
        listed = lifecycle_runs.list_runs(_One(kind, obj), namespace)["runs"]
        if not listed:
            return None
        row: dict[str, Any] = listed[0]
        labels = (obj.get("metadata") or {}).get("labels") or {}
        row["cluster"] = row["cluster"] or self.cluster
        row["durableId"] = row["durableId"] or durable_id(
            row["cluster"], namespace, row["resourceUid"], kind, row["name"]
        )
        row["experimentTracking"] = TRACKING[bool(row["experimentTracking"])]
        row["gpus"] = gpus(obj)
        row["owner"] = labels.get(keys.TEAM, "")
        row["project"] = labels.get(keys.STELLAR_PROJECT, "")
        row["historyOnly"] = False
        return row

    def forget(self, keep: set[str]) -> None:
        for key in set(self._rows) - keep:
            del self._rows[key]


class _One:
    """A one-object stand-in for the client `list_runs` reads, so the board's rows are built
    by exactly the code that builds `tau run list`'s."""

    def __init__(self, kind: str, obj: dict[str, Any]) -> None:
        self.kind, self.obj = kind, obj

    def list(
        self,
        resource: Resource,
        namespace: str = "",
        *,
        label_selector: str = "",
        field_selector: str = "",
    ) -> list[dict[str, Any]]:
        wanted = "Job" if resource is JOBS else "RayJob" if resource is RAY_JOBS else ""
        return [self.obj] if wanted == self.kind else []


class History(Protocol):
    """A source of the workspace's latest lifecycle rows (the store file or ADX)."""

    where: str

    def stamp(self) -> tuple[Any, ...]: ...

    def read(self) -> list[dict[str, Any]]: ...


class HistoryReader:
    """Latest lifecycle rows of the workspace, re-read only when the file changed."""

    def __init__(self, store: Path, workspace: str, limit: int) -> None:
        self.store, self.workspace, self.limit = store, workspace, limit
        self.where = f"the lifecycle history in {store}"
        self._key: tuple[Any, ...] | None = None
        self._rows: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def stamp(self) -> tuple[Any, ...]:
        from tau.evidence import lifecycle

        base = lifecycle.path(self.store)
        parts: list[tuple[int, int] | None] = []
        for file in (base, base.with_name(base.name + "-wal")):
            try:
                st = file.stat()
            except FileNotFoundError:
                parts.append(None)
            else:
                parts.append((st.st_mtime_ns, st.st_size))
        return tuple(parts)

    def read(self) -> list[dict[str, Any]]:
        from tau.evidence import lifecycle

        stamp = self.stamp()
        with self._lock:
            if stamp != self._key:
                self._rows = lifecycle.latest(
                    self.store, workspace_id=self.workspace, limit=self.limit
                )
                self._key = stamp
            return self._rows


def history_row(row: dict[str, Any]) -> dict[str, Any]:
    created = row.get("created_time") or row.get("submit_time") or row.get("observed_at") or ""
    kind = row.get("owning_resource_kind") or "Job"
    return {
        "name": row.get("owning_resource_name", ""),
        "kind": kind,
        "status": STATE_OF_HISTORY.get(row.get("state", ""), row.get("state", "")),
        "state": row.get("state", ""),
        "created": created,
        "runId": row.get("run_id", ""),
        "queue": row.get("local_queue", ""),
        "namespace": row.get("namespace", ""),
        "cluster": row.get("cluster", ""),
        "resourceUid": row.get("resource_uid", ""),
        "durableId": row.get("durable_id", ""),
        "source": "history",
        "experimentTracking": row.get("experiment_tracking") or "untracked",
        "experimentPath": "",
        "executionTarget": "singleCluster",
        "gpus": 0,
        "owner": "",
        "project": row.get("project", ""),
        "historyOnly": True,
        "reason": row.get("reason", ""),
    }


def merge(live: list[dict[str, Any]], history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Live rows win; a history row joins by durable id, then resource UID, then run id."""
    if not history:
        return list(live)
    seen: set[tuple[str, ...]] = {("d", r["durableId"]) for r in live if r["durableId"]}
    seen |= {("u", r["resourceUid"]) for r in live if r["resourceUid"]}
    seen |= {("r", r["namespace"], r["runId"]) for r in live if r["runId"]}
    merged = list(live)
    for row in history:
        keys_: list[tuple[str, ...]] = [("d", row["durableId"]), ("u", row["resourceUid"])]
        keys_.append(("r", row["namespace"], row["runId"]))
        if any(k in seen for k in keys_ if k[-1]):
            continue
        merged.append(row)
    return merged


def _matches(row: dict[str, Any], q: str, state: str, kind: str, namespace: str) -> bool:
    if namespace and row["namespace"] != namespace:
        return False
    if kind and row["kind"].lower() != kind.lower():
        return False
    if state and state.lower() not in (row["status"].lower(), str(row.get("state", "")).lower()):
        return False
    if q:
        text = " ".join(
            str(row.get(k, "")) for k in ("name", "runId", "queue", "owner", "project", "status")
        )
        return q.lower() in text.lower()
    return True


class RunsIndex:
    """The merged, sorted run list, rebuilt only when a watch event or the history file changed.

    A page load then costs its page, not the namespace's size: filter results are kept per
    filter, and only the returned rows get their `age` computed.
    """

    MAX_FILTERS = 32

    def __init__(self, cluster: str, history: History | None) -> None:
        self.memo = RowMemo(cluster)
        self.history = history
        self._key: tuple[Any, ...] | None = None
        self._rows: list[dict[str, Any]] = []
        self._history: tuple[str, str] = (LIVE_ONLY, "")
        self._filtered: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def _rebuild(
        self, items: Callable[[str], list[dict[str, Any]]], namespaces: tuple[str, ...]
    ) -> bool:
        """Rebuild the sorted list; False when the history read failed (retry next time)."""
        live, keep = [], set()
        for ns in namespaces:
            for obj in items(ns):
                meta = obj.get("metadata") or {}
                keep.add(meta.get("uid") or f"{ns}/{obj.get('kind')}/{meta.get('name')}")
                row = self.memo.row(obj, ns)
                if row is not None:
                    live.append(row)
        self.memo.forget(keep)
        state, diagnostic, past = LIVE_ONLY, "", []
        if self.history is not None:
            try:
                past = [history_row(r) for r in self.history.read()]
            except (TauError, sqlite3.Error, OSError, ValueError) as error:
                state = HISTORY_UNAVAILABLE
                diagnostic = (
                    error.one_line()
                    if isinstance(error, TauError)
                    else f"cannot read {self.history.where}: {type(error).__name__}: {error}"
                )
            else:
                state = HISTORY_AVAILABLE
        rows = merge(live, past)
        rows.sort(key=itemgetter("created", "name"), reverse=True)
        self._rows, self._history, self._filtered = rows, (state, diagnostic), {}
        return state != HISTORY_UNAVAILABLE

    def rows(
        self,
        items: Callable[[str], list[dict[str, Any]]],
        namespaces: tuple[str, ...],
        generation: int,
        *,
        q: str = "",
        state: str = "",
        kind: str = "",
        namespace: str = "",
    ) -> tuple[list[dict[str, Any]], tuple[str, str]]:
        """(matching rows newest first, (historyState, historyDiagnostic))."""
        with self._lock:
            key = (generation, namespaces, self.history.stamp() if self.history else None)
            if key != self._key:
                self._key = key if self._rebuild(items, namespaces) else None
            wanted = (q, state, kind, namespace)
            found = self._filtered.get(wanted)
            if found is None:
                found = (
                    [r for r in self._rows if _matches(r, q, state, kind, namespace)]
                    if any(wanted)
                    else self._rows
                )
                if len(self._filtered) >= self.MAX_FILTERS:
                    self._filtered.clear()
                self._filtered[wanted] = found
            return found, self._history

    def board(
        self,
        items: Callable[[str], list[dict[str, Any]]],
        namespaces: tuple[str, ...],
        generation: int,
        *,
        q: str = "",
        state: str = "",
        kind: str = "",
        namespace: str = "",
        limit: int = 500,
        offset: int = 0,
    ) -> dict[str, Any]:
        """The Runs board snapshot (`items(namespace)` yields the cached Jobs and RayJobs;
        `generation` changes whenever any of them does)."""
        rows, (history_state, diagnostic) = self.rows(
            items, namespaces, generation, q=q, state=state, kind=kind, namespace=namespace
        )
        now = datetime.now(UTC)
        page = [
            {**r, "age": lifecycle_runs.age(r["created"], now)}
            for r in rows[offset : offset + limit]
        ]
        return {
            "namespace": namespace or ",".join(namespaces),
            "total": len(rows),
            "offset": offset,
            "limit": limit,
            "runs": page,
            "historyState": history_state,
            "historyDiagnostic": diagnostic,
        }

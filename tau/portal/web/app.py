"""`taugrid-portal portal serve`: the Portal's HTTP surface over the watch cache.

Routes (the OpenAPI document at /openapi.json lists them with their parameters):

- `/` -> `/portal`; `/portal/...` the single-page app (unknown paths fall back to it, a
  missing asset file is 404);
- `/healthz` (liveness) and `/readyz` (every informer synced);
- `/api/portal/{workspaces,overview,runs,runs/{ns}/{name},runs/{ns}/{name}/logs,jobs,nodes,
  experiments}`: the boards, each with `scope` and `state` (ready | no_data | unavailable);
  a board whose source is not configured answers 503 `{reason}`, a failing source 502;
- with `--kueueviz`, Kueue (Live): KueueViz's pages under `/kueueviz/`, its sockets under
  `/kueueviz/ws/` and its YAML view at `/api/<kind>/<name>` (tau.portal.web.kueueviz);
- everything else is the Stellar server (`/stellar?target=&project=&workspace=` and its APIs)
  over the workspace store, opened read-only: a dashboard read never writes to the store.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from tau.errors import TauError
from tau.kube import KubeClient, KubeError
from tau.kube.informer import ObjectCache
from tau.kube.resources import (
    CLUSTER_QUEUES,
    EVENTS,
    JOBS,
    LOCAL_QUEUES,
    NODES,
    PODS,
    RAY_JOBS,
    WORKLOADS,
)
from tau.portal.hostcheck import HostCheckMiddleware, HostPolicy
from tau.portal.web import detail, kueueviz, nodes, queue, runs
from tau.portal.web.config import PortalConfig

STATIC = Path(__file__).resolve().parent.parent / "static" / "portal"
READY, NO_DATA, UNAVAILABLE = "ready", "no_data", "unavailable"


class BoardUnavailable(Exception):
    """A board whose data source is not configured (503) or failed (502)."""

    def __init__(self, reason: str, status: int = 503) -> None:
        super().__init__(reason)
        self.reason, self.status = reason, status


class Portal:
    """The caches and readers behind every board; started once per process."""

    def __init__(
        self, config: PortalConfig, kube: KubeClient, history: runs.History | None = None
    ) -> None:
        self.config = config
        self.kube = kube
        self.cache = ObjectCache(kube)
        for resource in (JOBS, RAY_JOBS, PODS, EVENTS, WORKLOADS):
            self.cache.add(resource, config.namespaces)
        if config.queue_namespaces:
            self.cache.add(WORKLOADS, config.queue_namespaces)
            self.cache.add(LOCAL_QUEUES, config.queue_namespaces)
            self.cache.add(CLUSTER_QUEUES)
        self.cache.add(NODES)
        if config.kueueviz_bundle is not None:
            kueueviz.watch(self.cache, config.namespaces)
        self.history = history if history is not None else default_history(config)
        self.runs = runs.RunsIndex(config.cluster, self.history)
        self.visibility = (
            queue.Visibility(kube, self.scoped_local_queues) if config.queue_namespaces else None
        )
        self._stellar: Any = None
        self._stellar_lock = threading.Lock()

    def start(self) -> None:
        self.cache.start()
        if self.visibility is not None:
            self.visibility.start()

    def stop(self) -> None:
        self.cache.stop()
        if self.visibility is not None:
            self.visibility.stop()

    # -- scope ---------------------------------------------------------------------------

    def scope(self, availability: str = "live") -> dict[str, Any]:
        c = self.config
        return {
            "workspace": c.workspace,
            "name": c.workspace,
            "cluster": c.cluster,
            "team": "",
            "namespace": c.namespaces[0] if c.namespaces else "",
            "namespaces": list(c.namespaces),
            "localQueue": "",
            "resultScope": c.workspace,
            "source": c.source,
            "authorizationMode": "cluster-wide",
            "experimentsUrl": "/portal/experiments",
            "portalEndpoint": "/portal",
            "availability": availability,
            "managed": True,
        }

    def scoped_local_queues(self) -> list[tuple[str, str]]:
        c = self.config
        if c.jobs_scope_mode == "operator":
            return [(s.namespace, s.local_queue) for s in c.operator_scopes]
        found = []
        for ns in c.queue_namespaces:
            found += [(ns, lq["metadata"]["name"]) for lq in self.cache.items(LOCAL_QUEUES, ns)]
        return found

    def require_namespace(self, namespace: str) -> None:
        if namespace not in self.config.namespaces:
            raise BoardUnavailable(
                f"namespace {namespace!r} is not in this Portal's workspace scope "
                f"({', '.join(self.config.namespaces)})",
                404,
            )

    # -- boards --------------------------------------------------------------------------

    def runs_board(self, **filters: Any) -> dict[str, Any]:
        if not self.config.namespaces:
            raise BoardUnavailable(
                "no workspace namespace is configured: pass -n/--namespace "
                "(owner: platform operator, portal.workloadNamespace)"
            )
        board = self.runs.board(
            self._run_objects, self.config.namespaces, self._generation(), **filters
        )
        return {"scope": self.scope(), "state": READY if board["total"] else NO_DATA, **board}

    def _run_objects(self, namespace: str) -> list[dict[str, Any]]:
        return self.cache.items(JOBS, namespace) + self.cache.items(RAY_JOBS, namespace)

    def _generation(self) -> int:
        return self.cache.generation(JOBS, RAY_JOBS)

    def run_detail(self, namespace: str, name: str) -> dict[str, Any]:
        self.require_namespace(namespace)
        doc = detail.document(self.cache, namespace, name, self.config.workspace)
        if not doc["status"]["found"]:
            raise BoardUnavailable(
                f"no Job or RayJob {name!r} in namespace {namespace!r} (it may have been "
                "deleted; the Runs board keeps it when run history is enabled)",
                404,
            )
        return {"scope": self.scope(), "state": READY, **doc}

    def run_logs(self, namespace: str, name: str, tail: int) -> dict[str, Any]:
        self.require_namespace(namespace)
        logs = detail.log_tail(self.cache, namespace, name, tail)
        return {"scope": self.scope(), "state": READY if logs["streams"] else NO_DATA, **logs}

    def jobs_board(self) -> dict[str, Any]:
        c = self.config
        if not c.queue_namespaces:
            raise BoardUnavailable(
                "the Jobs/Queue board is disabled: set --jobs-scope-mode workspace or operator "
                "(owner: platform operator, portal.jobs.scopeMode)"
            )
        scoped = set(self.scoped_local_queues())
        local_queues = [
            lq
            for ns in c.queue_namespaces
            for lq in self.cache.items(LOCAL_QUEUES, ns)
            if (ns, lq["metadata"]["name"]) in scoped
        ]
        workloads = [w for ns in c.queue_namespaces for w in self.cache.items(WORKLOADS, ns)]
        board = queue.board(
            self.cache.items(CLUSTER_QUEUES), local_queues, workloads, self.visibility
        )
        state = READY if board["clusterQueues"] else NO_DATA
        return {"scope": self.scope(), "state": state, "scopeMode": c.jobs_scope_mode, **board}

    def nodes_board(self, gpu_only: bool) -> dict[str, Any]:
        informer = self.cache.informer(NODES)
        if informer is not None and informer.state not in ("synced", "syncing"):
            raise BoardUnavailable(f"cannot read Nodes: {informer.detail}", 502)
        board = nodes.board(self.cache.items(NODES), gpu_only=gpu_only)
        return {"scope": self.scope(), "state": READY if board["total"] else NO_DATA, **board}

    def store(self) -> Any:
        from tau.evidence import Store

        if self.config.store is None:
            raise BoardUnavailable(
                "no workspace store is configured: pass --store PATH "
                "(owner: platform operator, portal.storePath)"
            )
        try:
            return Store.open(self.config.store, migrate=False)
        except TauError as error:
            raise BoardUnavailable(error.one_line(), 503) from None

    def experiments_board(self, q: str, project: str) -> dict[str, Any]:
        from urllib.parse import urlencode

        from tau.evidence import query

        index = query.experiment_index(self.store(), q, project)
        rows = []
        for item in index.get("experiments") or []:
            params = {
                "target": item["experiment_id"],
                "project": item.get("project", ""),
                "workspace": self.config.workspace,
            }
            link = "/stellar?" + urlencode({k: v for k, v in params.items() if v})
            rows.append({**item, "stellarUrl": link})
        return {
            "scope": self.scope(),
            "state": READY if rows else NO_DATA,
            "total": len(rows),
            "experiments": rows,
        }

    def overview(self) -> dict[str, Any]:
        rows, (history_state, _) = self.runs.rows(
            self._run_objects, self.config.namespaces, self._generation()
        )
        counts: dict[str, int] = {}
        for row in rows:
            counts[row["status"]] = counts.get(row["status"], 0) + 1
        node_board = nodes.board(self.cache.items(NODES))
        return {
            "scope": self.scope(),
            "state": READY,
            "runs": {"total": len(rows), "byStatus": counts},
            "historyState": history_state,
            "nodes": {
                "gpuNodes": node_board["gpuNodes"],
                "gpus": node_board["gpus"],
                "withGpuProblems": node_board["nodesWithGpuProblems"],
            },
            "jobsBoard": bool(self.config.queue_namespaces),
            "kueueviz": kueueviz.PREFIX + "/" if self.config.kueueviz_bundle else "",
            "informers": self.cache.status(),
        }

    # -- the mounted Stellar server ------------------------------------------------------

    def stellar(self) -> Any:
        with self._stellar_lock:
            if self._stellar is None:
                from tau.portal.server import ServerConfig, create_app

                self._stellar = create_app(
                    ServerConfig(
                        store=self.store(),
                        workspace=self.config.workspace,
                        max_runs=self.config.max_runs,
                        allowed_hosts=self.config.allowed_hosts,
                    )
                )
            return self._stellar


def default_history(config: PortalConfig) -> runs.History | None:
    """Where durable run history comes from: ADX with `--source kusto` (the Portal pod's
    workload identity), else the lifecycle rows in the workspace store."""
    if not config.run_history_enabled:
        return None
    if config.source == "kusto":
        from tau.portal.kusto import azure_token
        from tau.portal.web.kusto_history import KustoHistoryReader

        return KustoHistoryReader(
            config.kusto_endpoint,
            config.kusto_database,
            config.workspace,
            config.run_history_limit,
            table=config.run_history_table,
            token=azure_token(
                config.kusto_endpoint, owner="platform operator (portal.serviceAccount)"
            ),
        )
    if config.store is None:
        return None
    return runs.HistoryReader(config.store, config.workspace, config.run_history_limit)


def _json(data: Any, status: int = 200) -> Response:
    body = json.dumps(data, separators=(",", ":"), default=str)
    return Response(body, status_code=status, media_type="application/json")


def create_app(portal: Portal) -> FastAPI:
    config = portal.config
    app = FastAPI(
        title="TauGrid Portal",
        version="v1",
        description="Read-only boards over the workspace's runs, queues, nodes and experiments.",
        docs_url=None,
        redoc_url=None,
    )

    @app.exception_handler(BoardUnavailable)
    async def unavailable(_: Request, error: BoardUnavailable) -> Response:
        return _json({"reason": error.reason}, error.status)

    @app.exception_handler(KubeError)
    async def kube_failed(_: Request, error: KubeError) -> Response:
        return _json({"reason": error.one_line()}, 502)

    @app.exception_handler(TauError)
    async def tau_failed(_: Request, error: TauError) -> Response:
        return _json({"reason": error.one_line()}, 400)

    @app.middleware("http")
    async def single_workspace(request: Request, call_next: Any) -> Any:
        workspace = request.query_params.get("workspace")
        if request.url.path.startswith("/api/portal/") and workspace not in (
            None,
            config.workspace,
        ):
            return _json(
                {
                    "reason": f"workspace {workspace[:80]!r} is not served by this Portal "
                    f"(it serves {config.workspace!r})"
                },
                400,
            )
        return await call_next(request)

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/portal", status_code=302)

    @app.get("/healthz", summary="Liveness")
    def healthz() -> Response:
        return _json({"status": "ok"})

    @app.get("/readyz", summary="Readiness: every watch has listed once")
    def readyz() -> Response:
        status = portal.cache.status()
        waiting = [s for s in status if s["state"] in ("syncing", "failing")]
        return _json({"ready": not waiting, "informers": status}, 503 if waiting else 200)

    @app.get("/api/portal/workspaces", summary="The workspace this Portal serves")
    def workspaces() -> Response:
        return _json({"workspaces": [portal.scope() | {"default": True}]})

    @app.get("/api/portal/overview", summary="Overview cards")
    def overview(workspace: str = "") -> Response:
        return _json(portal.overview())

    @app.get("/api/portal/runs", summary="Runs board (live Jobs and RayJobs, plus history)")
    def runs_board(
        workspace: str = "",
        namespace: str = "",
        q: str = Query("", max_length=200),
        state: str = Query("", max_length=40),
        kind: str = Query("", max_length=10),
        limit: int = Query(500, ge=0, le=10000),
        offset: int = Query(0, ge=0),
    ) -> Response:
        return _json(
            portal.runs_board(
                q=q, state=state, kind=kind, namespace=namespace, limit=limit, offset=offset
            )
        )

    @app.get("/api/portal/runs/{namespace}/{name}", summary="One run: phases, events, pods")
    def run_detail(namespace: str, name: str, workspace: str = "") -> Response:
        return _json(portal.run_detail(namespace, name))

    @app.get("/api/portal/runs/{namespace}/{name}/logs", summary="Log tail of a run's pods")
    def run_logs(
        namespace: str, name: str, tail: int = Query(100, ge=1, le=1000), workspace: str = ""
    ) -> Response:
        return _json(portal.run_logs(namespace, name, tail))

    @app.get("/api/portal/jobs", summary="Jobs/Queue board (Kueue quota and pending line)")
    def jobs(workspace: str = "") -> Response:
        return _json(portal.jobs_board())

    @app.get("/api/portal/nodes", summary="Cluster Nodes board (GPU nodes and health)")
    def nodes_board(all: bool = False, workspace: str = "") -> Response:
        return _json(portal.nodes_board(gpu_only=not all))

    @app.get("/api/portal/experiments", summary="Experiments in the workspace store")
    def experiments(
        q: str = Query("", max_length=200), project: str = "", workspace: str = ""
    ) -> Response:
        return _json(portal.experiments_board(q, project))

    index = STATIC / "index.html"

    @app.get("/portal", include_in_schema=False)
    def shell() -> HTMLResponse:
        return HTMLResponse(index.read_text())

    @app.get("/portal/{path:path}", include_in_schema=False)
    def shell_path(path: str) -> Response:
        if path.startswith("assets/"):
            asset = (STATIC / path).resolve()
            if asset.is_file() and STATIC in asset.parents:
                return FileResponse(asset, headers={"Cache-Control": "max-age=3600"})
            return _json({"reason": f"no asset {path[:80]!r}"}, 404)
        if "." in path.rsplit("/", 1)[-1]:
            return _json({"reason": f"no file {path[:80]!r}"}, 404)
        return HTMLResponse(index.read_text())

    async def stellar(scope: Any, receive: Any, send: Any) -> None:
        try:
            inner = portal.stellar()
        except BoardUnavailable as error:
            body = json.dumps({"reason": error.reason}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": error.status,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await inner(scope, receive, send)

    if config.kueueviz_bundle is not None:
        kueueviz.mount(app, portal, config.kueueviz_bundle)
    app.mount("/", stellar)
    app.add_middleware(HostCheckMiddleware, policy=HostPolicy.for_names(config.allowed_hosts))
    return app

"""The local Stellar HTTP server: run and experiment pages plus the series API.

FastAPI and uvicorn load only when a server starts. Series responses are downsampled on the
server (LTTB) to at most `max_points` per line, so a million-point history costs the browser
no more than a short one.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from tau.errors import RuntimeFailure, TauError, UsageError, ValidationError
from tau.evidence import query
from tau.evidence.series import read_series
from tau.evidence.store import Store
from tau.portal import html, snapshot
from tau.portal.downsample import lttb
from tau.portal.hostcheck import HostCheckMiddleware, HostPolicy, is_ip_literal

if TYPE_CHECKING:
    from fastapi import FastAPI

DEFAULT_MAX_POINTS = 8000
MAX_POINTS = 12000
BASES = ("/api/stellar", "/api/v1/stellar", "/api/v2/stellar")
SUCCESSOR = "/api/v2/stellar/runs"


@dataclass(frozen=True)
class ServerConfig:
    store: Store
    workspace: str = "default"
    default_target: str = ""
    metrics: tuple[str, ...] = ()
    max_runs: int = 200
    # Host names (besides IP literals and localhost) the server answers to; see hostcheck.
    allowed_hosts: tuple[str, ...] = ()


def clamp_points(requested: int | None) -> int:
    if not requested or requested <= 0:
        return DEFAULT_MAX_POINTS
    return min(requested, MAX_POINTS)


def stellar_url(addr: str, target: str, metric: str = "") -> str:
    """The browser URL for a bind address; wildcard hosts become 127.0.0.1."""
    host, _, port = addr.rpartition(":")
    host = host.strip("[]")
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    params = {k: v for k, v in (("metric", metric), ("target", target)) if v}
    return f"http://{host}:{port}/stellar" + (f"?{urlencode(params)}" if params else "")


def series_payload(
    store: Store, target: str, metrics: list[str], max_points: int | None
) -> dict[str, Any]:
    limit = clamp_points(max_points)
    with query.reader(store) as db:
        _, run_ids = query.resolve_target(db, target)
    raw = read_series(store, run_ids, metrics or None, envelope=2 * limit)
    lines = []
    for (run_id, metric), found in sorted(raw.items()):
        xs, ys = lttb(found.steps, found.values, limit)
        lines.append(
            {
                "run_id": run_id,
                "metric": metric,
                "points": found.points,
                "returned": len(xs),
                "downsampled": len(xs) < found.points,
                "non_finite": found.non_finite,
                "x": xs,
                "y": ys,
            }
        )
    return {"target": target, "metric": metrics, "max_points": limit, "series": lines}


def create_app(config: ServerConfig) -> FastAPI:
    from fastapi import FastAPI, Query, Request
    from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

    app = FastAPI(title="Stellar", docs_url=None, redoc_url=None, openapi_url=None)
    store = config.store

    @app.exception_handler(TauError)
    async def tau_error(_: Request, error: TauError) -> JSONResponse:
        code = 400 if isinstance(error, UsageError | ValidationError) else 500
        return JSONResponse({"reason": error.one_line()}, status_code=code)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        # Still JSON, never a bare 500: the page shows the reason instead of a blank board.
        return JSONResponse(
            {
                "reason": f"{request.url.path} failed ({type(error).__name__}); "
                "see the server's terminal (owner: TauGrid maintainers)"
            },
            status_code=500,
        )

    @app.middleware("http")
    async def workspace_and_deprecation(request: Request, call_next: Any) -> Any:
        workspace = request.query_params.get("workspace")
        if workspace and workspace != config.workspace:
            return JSONResponse(
                {
                    "reason": f"workspace {workspace!r} is not served here "
                    f"(this server: {config.workspace!r})"
                },
                status_code=400,
            )
        response = await call_next(request)
        path = request.url.path
        generic = (
            path.startswith("/api/v2/stellar/")
            and path.rsplit("/", 1)[-1] in ("snapshot", "series", "runs", "experiments")
            and path.count("/") == 4
        )
        if path.startswith(("/api/stellar/", "/api/v1/stellar/")) or generic:
            response.headers["Deprecation"] = "true"
            response.headers["Link"] = f'<{SUCCESSOR}>; rel="successor-version"'
            response.headers["Warning"] = '299 - "deprecated Stellar API; use /api/v2/stellar/runs"'
        return response

    def page(target: str, metric: list[str]) -> HTMLResponse:
        chosen = target or config.default_target
        return HTMLResponse(html.render_served(chosen, metric or list(config.metrics)))

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/stellar")

    @app.get("/stellar", response_class=HTMLResponse)
    def stellar_page(target: str = "", metric: list[str] = Query(default=[])) -> HTMLResponse:
        return page(target, metric)

    @app.get("/stellar/runs/{run_id}", response_class=HTMLResponse)
    def run_page(run_id: str, metric: list[str] = Query(default=[])) -> HTMLResponse:
        return page(run_id, metric)

    @app.get("/stellar/experiments/{experiment_id}", response_class=HTMLResponse)
    def experiment_page(experiment_id: str, metric: list[str] = Query(default=[])) -> HTMLResponse:
        return page(experiment_id, metric)

    @app.get("/stellar/assets/{name}")
    def assets(name: str) -> Response:
        try:
            body = html.asset(name)
        except KeyError:
            return JSONResponse({"reason": f"no asset {name!r}"}, status_code=404)
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        return Response(body, media_type=kind, headers={"Cache-Control": "max-age=86400"})

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "store_path": str(store.root), "source": "local"}

    for base in BASES:
        _mount_generic(app, base, config)

    @app.get("/api/v2/stellar/experiments/search")
    def experiments_search(q: str = "", project: str = "") -> dict[str, Any]:
        return query.experiment_index(store, q, project)

    @app.get("/api/v2/stellar/experiments/{experiment_id}/runs")
    def experiment_runs(experiment_id: str) -> dict[str, Any]:
        return query.search_runs(
            store, query.RunQuery(experiment=experiment_id, limit=config.max_runs)
        )

    @app.get("/api/v2/stellar/search")
    def search(
        q: str = "",
        target: str = "",
        project: str = "",
        group: str = "",
        experiment: str = "",
        state: str = "",
        lifecycle: str = "",
        tag: list[str] = Query(default=[]),
        metric_name: str = "",
        metric_filter: list[str] = Query(default=[]),
        since: str = "",
        min_step: int | None = None,
        limit: int = query.DEFAULT_LIMIT,
    ) -> dict[str, Any]:
        """`experiment search` over this store: the same filters, the same envelope."""
        tags = {}
        for item in tag:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise UsageError(f"tag {item!r} must be KEY=VALUE")
            tags[key.strip()] = value
        return query.search_runs(
            store,
            query.RunQuery(
                query=q,
                target=target,
                project=project,
                group=group,
                experiment=experiment,
                state=state,
                lifecycle=lifecycle,
                tags=tags,
                metric_name=metric_name,
                metric_filters=[query.parse_metric_filter(f) for f in metric_filter],
                since=since,
                min_step=min_step,
                limit=limit,
            ),
        )

    @app.get("/api/v2/stellar/compare")
    def compare_runs(
        target: str, metric: list[str] = Query(default=[]), direction: str = ""
    ) -> dict[str, Any]:
        """`experiment compare TARGET`: per-group statistics and the winner, as rows."""
        from tau.portal.compare import compare

        return {"target": target, "rows": compare(store, target, metric, direction)}

    @app.get("/api/v2/stellar/runs/{run_id}")
    def run_detail(run_id: str) -> dict[str, Any]:
        found = query.search_runs(store, query.RunQuery(target=run_id, limit=config.max_runs))[
            "runs"
        ]
        match: list[dict[str, Any]] = [r for r in found if r["run_id"] == run_id]
        if not match:
            raise ValidationError(f"run {run_id!r} is not in this store")
        return match[0]

    @app.get("/api/v2/stellar/runs/{run_id}/metrics")
    def run_metrics(run_id: str) -> dict[str, Any]:
        return {"run_id": run_id, "metrics": run_detail(run_id)["metrics"]}

    @app.get("/api/v2/stellar/runs/{run_id}/series")
    def run_series(
        run_id: str, metric: list[str] = Query(default=[]), max_points: int | None = None
    ) -> dict[str, Any]:
        run_detail(run_id)
        return series_payload(store, run_id, metric, max_points)

    for name in ("labels", "dashboards", "workspaces"):
        for base in BASES:
            app.add_api_route(f"{base}/{name}", _not_implemented(name), methods=["GET", "POST"])

    app.add_middleware(HostCheckMiddleware, policy=HostPolicy.for_names(config.allowed_hosts))
    return app


def _not_implemented(name: str) -> Any:
    from fastapi.responses import JSONResponse

    async def handler() -> JSONResponse:
        return JSONResponse(
            {"reason": f"Stellar {name} are not implemented by the local server"}, status_code=501
        )

    return handler


def _mount_generic(app: FastAPI, base: str, config: ServerConfig) -> None:
    from fastapi import Query

    store = config.store

    @app.get(f"{base}/capabilities")
    def capabilities() -> dict[str, Any]:
        return {
            "sources": ["local"],
            "workspace": config.workspace,
            "limits": {
                "max_points": MAX_POINTS,
                "default_max_points": DEFAULT_MAX_POINTS,
                "max_runs": config.max_runs,
            },
        }

    @app.get(f"{base}/experiments")
    def experiments(q: str = "") -> dict[str, Any]:
        return query.experiment_index(store, q)

    @app.get(f"{base}/runs")
    def runs(target: str = "") -> dict[str, Any]:
        return query.search_runs(store, query.RunQuery(target=target, limit=config.max_runs))

    @app.get(f"{base}/series")
    def series(
        target: str, metric: list[str] = Query(default=[]), max_points: int | None = None
    ) -> dict[str, Any]:
        return series_payload(store, target, metric, max_points)

    @app.get(f"{base}/snapshot")
    def snap(
        target: str, metric: list[str] = Query(default=[]), max_points: int | None = None
    ) -> dict[str, Any]:
        return snapshot.build_snapshot(
            store,
            target,
            metrics=metric or None,
            max_points=min(clamp_points(max_points), snapshot.DEFAULT_MAX_POINTS),
        )

    @app.get(f"{base}/status")
    def status(target: str) -> dict[str, Any]:
        return query.status(store, target)

    @app.get(f"{base}/artifacts")
    def artifacts(target: str) -> dict[str, Any]:
        return {"target": target, "artifacts": query.artifacts_for(store, target)}

    @app.get(f"{base}/artifact")
    def artifact(artifact_id: str) -> dict[str, Any]:
        row = query.artifact(store, artifact_id)
        if row is None:
            raise ValidationError(f"artifact {artifact_id!r} is not in this store")
        return row


@dataclass(frozen=True)
class BindAddress:
    host: str
    port: int

    @property
    def is_wildcard(self) -> bool:
        return self.host in ("0.0.0.0", "::")

    @property
    def is_loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def is_name(self) -> bool:
        return not is_ip_literal(self.host)

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_addr(addr: str, flag: str = "--addr") -> BindAddress:
    """HOST:PORT (IPv6 in brackets); an empty host means 127.0.0.1, never every interface."""
    host, sep, port = addr.strip().rpartition(":")
    if not sep or not port.isascii() or not port.isdigit() or int(port) > 65535:
        shown = addr[:80].encode("ascii", "backslashreplace").decode()
        raise UsageError(
            f"{flag} {shown!r} must be HOST:PORT with a port from 0 to 65535",
            hint=f"for example {flag} 127.0.0.1:8080",
            owner="the user",
        )
    host = host.strip("[]") or "127.0.0.1"
    return BindAddress(host, int(port))


def listen(addr: str) -> socket.socket:
    """Bind HOST:PORT before anything says "serving": a bad or busy address is one line."""
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError(
            "the Stellar server needs the portal extra",
            hint="pip install 'taugrid[portal]'",
            owner="the user's installation",
        ) from None
    bind = parse_addr(addr)
    try:
        family, _, _, _, sockaddr = socket.getaddrinfo(
            bind.host, bind.port, type=socket.SOCK_STREAM
        )[0]
    except (OSError, UnicodeError) as error:
        raise UsageError(
            f"--addr {bind}: cannot resolve host ({getattr(error, 'strerror', None) or error})",
            hint="use an IP address such as 127.0.0.1",
            owner="the user",
        ) from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(sockaddr)
    except OSError as error:
        sock.close()
        raise RuntimeFailure(
            f"cannot listen on {addr}: {error.strerror or error}",
            hint="pick a free port with --addr HOST:PORT",
            owner="the user",
        ) from None
    return sock


def bound_address(sock: socket.socket) -> BindAddress:
    """The address the socket really listens on (the port the kernel chose for port 0)."""
    host, port = sock.getsockname()[:2]
    return BindAddress(host, port)


def exposure_warning(bound: BindAddress) -> str:
    """A loud line for a bind other machines can reach; empty for loopback binds."""
    if bound.is_loopback:
        return ""
    where = "every network interface" if bound.is_wildcard else f"{bound.host}"
    return (
        f"warning: Stellar listens on {bound} ({where}): any machine that can reach it can "
        "read every run in this store, without authentication; bind --addr 127.0.0.1:PORT "
        "to keep it on this machine"
    )


def allowed_hosts(addr: str, extra: tuple[str, ...]) -> tuple[str, ...]:
    """A bind address given by name (`--addr portal.lan:80`) is a name the server answers to."""
    bind = parse_addr(addr)
    return (*extra, bind.host) if bind.is_name else tuple(extra)


def serve(config: ServerConfig, sock: socket.socket) -> None:
    """Run the server on the bound socket in the foreground until interrupted."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(create_app(config), log_level="warning"))
    server.run(sockets=[sock])

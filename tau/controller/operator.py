"""kopf wiring: watches feed the work queue; workers call the reconcilers.

Handlers only translate watch events into queue keys, so every decision stays in the
reconciler modules. kopf owns the watches of the objects the controller writes, reconnects
and API discovery; the TauCluster's inputs (Nodes, Kueue and scheduling objects) are watched
by the informers of `ClusterInputs`, which also serve its reads. The queue gives each object
controller-runtime semantics (one reconcile at a time, requeue-after, backoff).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import kopf
from aiohttp import web

from tau import keys
from tau.api.meta import GROUP, VERSION
from tau.controller import kubeapi as k
from tau.controller.cache import ClusterInputs
from tau.controller.cluster import ClusterReconciler
from tau.controller.leader import RENEW_SECONDS, LeaderElector
from tau.controller.quota import QuotaReconciler
from tau.controller.workqueue import WorkQueue, worker
from tau.controller.workspace import DEFAULT_POD_SECURITY, WorkspaceReconciler
from tau.lifecycle.offload import LogOffload

log = logging.getLogger(__name__)

WORKERS = 2
CLUSTER_KEY = ("cluster", "cluster")

# Objects the workspace reconciler owns, watched so drift is repaired without waiting.
OWNED = (k.LOCAL_QUEUES, k.ROLE_BINDINGS, k.SERVICE_ACCOUNTS, k.CONFIG_MAPS)


@dataclass
class Options:
    system_namespace: str = "tau-system"
    health_address: str = ":8081"
    metrics_address: str = ":8080"
    leader_elect: bool = False
    pod_security: str = DEFAULT_POD_SECURITY
    log_offload: LogOffload | None = None


def build_registry(queue: WorkQueue, system_namespace: str) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
        return kopf.login_via_client(**kwargs)

    known_workspaces: set[tuple[str | None, str]] = set()

    @kopf.on.event(GROUP, VERSION, "workspaces", registry=registry)
    def workspace_event(event: kopf.RawEvent, namespace: str | None, name: str, **_: Any) -> None:
        queue.add(("workspace", namespace, name))
        if event.get("type") == "DELETED":
            # A departed primary lets a blocked workspace take over: look at all of them now.
            known_workspaces.discard((namespace, name))
            for other in known_workspaces:
                queue.add(("workspace", *other))
        else:
            known_workspaces.add((namespace, name))

    for resource in OWNED:
        # A deleted or edited LocalQueue, RoleBinding, ServiceAccount or log connection
        # ConfigMap is repaired at once.
        @kopf.on.event(
            resource.group,
            resource.version,
            resource.plural,
            labels={keys.APP_MANAGED_BY: keys.CONTROLLER_NAME, keys.WORKSPACE: kopf.PRESENT},
            registry=registry,
        )
        def owned_event(labels: kopf.Labels, **_: Any) -> None:
            queue.add(("workspace", system_namespace, labels[keys.WORKSPACE]))

    @kopf.on.event(GROUP, VERSION, "clusters", registry=registry)
    def cluster_event(name: str, **_: Any) -> None:
        queue.add(("cluster", name))

    @kopf.on.event(GROUP, VERSION, "quotarequests", registry=registry)
    def quota_event(namespace: str | None, name: str, **_: Any) -> None:
        queue.add(("quota", namespace, name))

    # Nodes and the other TauCluster inputs wake the queue from `ClusterInputs`' informers.
    return registry


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host or "0.0.0.0", int(port)


async def serve_probes(
    options: Options, state: dict[str, Any], queue: WorkQueue, client: k.ControllerClient
) -> web.AppRunner:
    """/healthz and /readyz on the health address, /metrics on the metrics address."""

    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        if state.get("ready") or state.get("standby"):
            return web.Response(text="ok")
        return web.Response(status=503, text="starting")

    async def metrics(_: web.Request) -> web.Response:
        lines = [
            "# TYPE tau_controller_reconciles_total counter",
            *(
                f'tau_controller_{name.rsplit("_", 1)[1]}_total{{kind="{name.rsplit("_", 1)[0]}"}}'
                f" {value}"
                for name, value in sorted(queue.stats.items())
            ),
            "# TYPE tau_controller_api_requests_total counter",
            *(
                f'tau_controller_api_requests_total{{verb="{verb}",resource="{resource}"}} {n}'
                for (verb, resource), n in sorted(client.kinds.items())
            ),
            f"tau_controller_queue_pending {queue.pending()}",
            f"tau_controller_leader {1 if state.get('ready') else 0}",
        ]
        return web.Response(text="\n".join(lines) + "\n")

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    metrics_app = web.Application()
    metrics_app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, *_split(options.health_address)).start()
    metrics_runner = web.AppRunner(metrics_app, access_log=None)
    await metrics_runner.setup()
    await web.TCPSite(metrics_runner, *_split(options.metrics_address)).start()
    state["runners"] = [runner, metrics_runner]
    return runner


async def run(options: Options, stop: asyncio.Event | None = None) -> None:
    client = k.ControllerClient()
    queue = WorkQueue()
    state: dict[str, Any] = {}
    stop = stop or asyncio.Event()
    # Fail fast with one line when the API server cannot be reached with these credentials.
    await asyncio.to_thread(client.request, "GET", "/version", what="reach the API server")
    await serve_probes(options, state, queue, client)
    elector = LeaderElector(client, options.system_namespace) if options.leader_elect else None
    tasks: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()

    def wake(why: str) -> None:  # called from the informer threads
        log.debug("TauCluster queued: %s", why)
        loop.call_soon_threadsafe(queue.add, CLUSTER_KEY)

    inputs = ClusterInputs(client, wake)
    try:
        if elector:
            state["standby"] = True
            await asyncio.to_thread(elector.acquire)
            state["standby"] = False
            tasks.append(asyncio.create_task(_renew(elector, stop)))
        inputs.start()
        handlers: dict[str, Callable[..., float | None]] = {
            "workspace": WorkspaceReconciler(
                client, options.system_namespace, options.pod_security, options.log_offload
            ).reconcile,
            "cluster": ClusterReconciler(client, inputs).reconcile,
            "quota": QuotaReconciler(client, options.system_namespace).reconcile,
        }
        tasks += [asyncio.create_task(worker(queue, handlers)) for _ in range(WORKERS)]
        queue.add(CLUSTER_KEY)
        settings = kopf.OperatorSettings()
        settings.posting.enabled = False
        ready = asyncio.Event()

        async def mark_ready() -> None:
            await ready.wait()
            state["ready"] = True
            log.info("tau-core-controller ready (system namespace %s)", options.system_namespace)

        tasks.append(asyncio.create_task(mark_ready()))
        await kopf.operator(
            registry=build_registry(queue, options.system_namespace),
            settings=settings,
            standalone=True,
            clusterwide=True,
            stop_flag=stop,
            ready_flag=ready,
        )
    finally:
        for task in tasks:
            task.cancel()
        inputs.stop()
        if elector:
            await asyncio.to_thread(elector.release)
        for runner in state.get("runners", []):
            with contextlib.suppress(Exception):
                await runner.cleanup()
        client.close()


async def _renew(elector: LeaderElector, stop: asyncio.Event) -> None:
    """Keep the lease; stop the operator if it is lost (another replica may be leading)."""
    while not stop.is_set():
        await asyncio.sleep(RENEW_SECONDS)
        if not await asyncio.to_thread(elector.try_acquire):
            log.error("lost the leader lease; stopping")
            stop.set()

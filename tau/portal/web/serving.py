"""Running the Portal process: start the watches, serve HTTP, stop cleanly on SIGTERM."""

from __future__ import annotations

import socket

from tau.kube.informer import CountingClient
from tau.portal.web.app import Portal, create_app
from tau.portal.web.config import PortalConfig

GRACEFUL_SHUTDOWN_SECONDS = 5


def run(config: PortalConfig, sock: socket.socket, *, kubeconfig: str | None, context: str) -> None:
    import uvicorn

    portal = Portal(config, CountingClient(kubeconfig, context))
    portal.start()
    try:
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(portal),
                log_level="warning",
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
            )
        )
        server.run(sockets=[sock])
    finally:
        portal.stop()

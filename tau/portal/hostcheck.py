"""Refuse HTTP requests whose Host header names a server other than this one.

A local dashboard bound to 127.0.0.1 is still reachable from any web page the user opens:
DNS rebinding points `attacker.example` at 127.0.0.1, and the browser then sends the
attacker's page's requests here with `Host: attacker.example`. Checking Host closes that
door. IP literals are always accepted (a page can only send `Host: 10.0.0.5` if it was loaded
from that address, i.e. from this server), as are `localhost` names and the names an operator
passes explicitly; any other name gets 421 Misdirected Request with a JSON reason.

Usage with any ASGI app (FastAPI, Starlette):

    app.add_middleware(HostCheckMiddleware, policy=HostPolicy(allowed_names=("portal.lan",)))
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

STATUS = 421
_SHOWN = 80


def host_name(header: str) -> str:
    """The name part of a Host header: port stripped, brackets of an IPv6 literal removed."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostPolicy:
    """Which Host names this server answers to, besides IP literals and `localhost`."""

    allowed_names: tuple[str, ...] = ()

    @classmethod
    def for_names(cls, names: Iterable[str]) -> HostPolicy:
        return cls(tuple(sorted({host_name(n) for n in names if n.strip()})))

    def allows(self, header: str | None) -> bool:
        if not header:
            return False
        name = host_name(header)
        if not name:
            return False
        if is_ip_literal(name) or name == "localhost" or name.endswith(".localhost"):
            return True
        return name in self.allowed_names

    def reason(self, header: str | None) -> str:
        shown = (header or "")[:_SHOWN].encode("ascii", "backslashreplace").decode()
        return (
            f"Host {shown!r} is not a name this server answers to (DNS rebinding protection); "
            "open it by IP address or localhost, or restart it with --allow-host NAME "
            "(owner: the operator running the server)"
        )


class HostCheckMiddleware:
    """Pure ASGI middleware: a refused Host never reaches a route."""

    def __init__(self, app: ASGIApp, policy: HostPolicy | None = None) -> None:
        self.app = app
        self.policy = policy or HostPolicy()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        header = _header(scope, b"host")
        if self.policy.allows(header):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps({"reason": self.policy.reason(header)}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": STATUS,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            text: str = value.decode("latin-1")
            return text
    return None

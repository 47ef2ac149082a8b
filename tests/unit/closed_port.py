"""An API server address nothing listens on: proves which paths never (or do) contact it."""

from __future__ import annotations

import socket
from pathlib import Path

import yaml


def closed_port() -> int:
    """A local port that was free a moment ago; connecting to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def closed_port_kubeconfig(
    path: Path, *, context: str = "x", token: str = "abc", scheme: str = "https"
) -> Path:
    """A one-context kubeconfig (current context `context`) pointing at a closed port."""
    server = f"{scheme}://127.0.0.1:{closed_port()}"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
                "current-context": context,
            }
        )
    )
    return path

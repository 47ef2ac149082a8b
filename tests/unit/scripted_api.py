"""A scripted HTTP endpoint standing in for API server answers a healthy cluster never shows.

The happy paths run against the real local control plane (tests/e2e); tests using this pin
how each HTTP failure is reported (tests/unit/kube), or how a command behaves while a
controller it waits on never finishes (tests/unit/lifecycle/test_cancel.py).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml


class ScriptedServer:
    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], tuple[int, object]] = {}
        self.requests: list[tuple[str, str, Message, bytes]] = []

    def answer(self, method: str, path: str, status: int, body: object) -> None:
        self.answers[(method, path)] = (status, body)


@contextlib.contextmanager
def scripted_api(tmp_path: Path) -> Iterator[tuple[ScriptedServer, Path]]:
    """A scripted server plus a kubeconfig (context `stand-in`) pointing at it."""
    script = ScriptedServer()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = self.path.split("?")[0]
            script.requests.append((self.command, self.path, self.headers, body))
            status, answer = script.answers.get((self.command, path), (404, "404 page not found"))
            data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = _serve

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "c", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}
                ],
                "users": [{"name": "u", "user": {"token": "s3cr3t-token-value"}}],
                "contexts": [{"name": "stand-in", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "stand-in",
            }
        )
    )
    try:
        yield script, kubeconfig
    finally:
        server.shutdown()
        server.server_close()

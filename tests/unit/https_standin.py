"""The TLS half of the local stand-ins for Azure endpoints (Entra ID/ARM, ADX queries).

Azure cannot be reached from here, and the clients under test only talk https, so each
stand-in serves its handler over TLS with a certificate for 127.0.0.1 from a throwaway CA (the
local cluster's, hack/localcluster/pki.py) that the test tells the client to trust
(REQUESTS_CA_BUNDLE, SSL_CERT_FILE).
"""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from hack.localcluster.pki import CertificateAuthority


class JsonHandler(BaseHTTPRequestHandler):
    """Answers in JSON, and keeps the request log off the test output."""

    def send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve_https(
    handler: type[BaseHTTPRequestHandler], directory: Path, name: str
) -> Iterator[tuple[str, Path]]:
    """The stand-in's https://127.0.0.1:PORT origin and the CA certificate to trust, while it
    serves. `name` keeps two stand-ins of one test apart in `directory`."""
    ca = CertificateAuthority.create(directory / name)
    leaf = ca.issue("server", name, hosts=("127.0.0.1",))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(leaf.cert, leaf.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        yield f"https://127.0.0.1:{server.server_port}", ca.pair.cert
    finally:
        server.shutdown()
        server.server_close()

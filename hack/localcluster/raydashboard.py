"""A stand-in for the Ray dashboards of fake RayClusters, reached as the operator's HTTP proxy.

KubeRay learns a RayJob's fate and a RayService's health from the Ray dashboard in the head pod,
at ``http://<head-svc>.<namespace>.svc.cluster.local:8265``. KWOK pods run no Ray, so the
operator is started with ``HTTP_PROXY`` pointing here: every such request arrives on loopback
in absolute form, names its namespace in the host, and is answered from the RayJob or RayService
objects themselves. Nothing is ever sent to a cluster address.

A RayJob runs for ``kwok.tau.azure.com/run-duration`` (default 1s) and then ends as its
``kwok.tau.azure.com/outcome`` annotation says: ``succeed`` (default) -> SUCCEEDED, ``fail`` ->
FAILED, ``run-forever`` -> stays RUNNING. Serve applications are reported RUNNING and healthy as
soon as the operator deploys them.

A head that runs on a real node (a kubelet, not KWOK) has a real dashboard: requests for its
Service are forwarded unchanged to the head pod's address, which this machine routes into the
node's network namespace, so the operator submits to and learns from Ray itself.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import fixtures as fx
from .cluster import LocalCluster

_JOB = re.compile(r"^/api/jobs/(?P<id>[^/]+)(?P<action>/stop|/logs)?/?$")
_SERVE = "/api/serve/applications/"
# How long a head's address (or its absence) is trusted before asking the apiserver again.
_LOOKUP_TTL = 5.0
_HOP_HEADERS = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te"}
_HOP_HEADERS |= {"trailer", "transfer-encoding", "upgrade", "host"}


def _duration_seconds(text: str | None) -> float:
    """Go-style durations as used by the KWOK stages ("500ms", "30s", "2m")."""
    if not text:
        return 1.0
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text):
        total += float(number) * units[unit]
    return total


class Dashboards:
    """What the fake dashboards remember: when each job started, what each cluster serves."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.lock = threading.Lock()
        self.started: dict[tuple[str, str], float] = {}
        self.serve_configs: dict[str, dict[str, Any]] = {}
        self.heads: dict[str, tuple[float, str | None]] = {}
        self.fake: dict[str, bool] = {}

    def job_info(self, namespace: str, job_id: str) -> dict[str, Any] | None:
        rayjob = next(
            (
                job
                for job in self.cluster.get_json("rayjobs.ray.io", "-n", namespace)["items"]
                if (job.get("status") or {}).get("jobId") == job_id
            ),
            None,
        )
        if rayjob is None:
            return None
        annotations = rayjob["metadata"].get("annotations") or {}
        with self.lock:
            started = self.started.setdefault((namespace, job_id), time.time())
        ends = started + _duration_seconds(annotations.get(fx.POD_RUN_DURATION_ANNOTATION))
        outcome = annotations.get(fx.POD_OUTCOME_ANNOTATION, fx.OUTCOME_SUCCEED)
        status = "RUNNING"
        if time.time() >= ends and outcome != fx.OUTCOME_RUN_FOREVER:
            status = "SUCCEEDED" if outcome == fx.OUTCOME_SUCCEED else "FAILED"
        info: dict[str, Any] = {
            "job_id": job_id,
            "submission_id": job_id,
            "entrypoint": rayjob["spec"].get("entrypoint", ""),
            "status": status,
            "message": f"Job {status.lower()} (fake Ray dashboard)",
            "start_time": int(started * 1000),
        }
        if status != "RUNNING":
            info["end_time"] = int(ends * 1000)
        if status == "FAILED":
            info["error_type"] = "JOB_ENTRYPOINT_COMMAND_ERROR"
        return info

    def real_head(self, host: str, namespace: str) -> str | None:
        """The head pod address behind ``host`` (its Service) when a kubelet runs it.

        Answers are kept a few seconds: the operator polls every RayJob's dashboard, and each
        lookup is a kubectl call."""
        if not namespace:
            return None
        now = time.monotonic()
        with self.lock:
            cached = self.heads.get(host)
        if cached and now - cached[0] < _LOOKUP_TTL:
            return cached[1]
        address = self._lookup_head(host.split(".")[0], namespace)
        with self.lock:
            self.heads[host] = (now, address)
        return address

    def _lookup_head(self, service: str, namespace: str) -> str | None:
        result = self.cluster.kubectl(
            "get", "endpoints", service, "-n", namespace, "-o", "json", check=False
        )
        if result.returncode != 0:
            return None
        for subset in json.loads(result.stdout).get("subsets") or []:
            for address in [*subset.get("addresses", []), *subset.get("notReadyAddresses", [])]:
                node = address.get("nodeName", "")
                if node and not self._is_fake(node):
                    return address["ip"]
        return None

    def _is_fake(self, node: str) -> bool:
        with self.lock:
            known = self.fake.get(node)
        if known is None:
            annotations = self.cluster.get_json("node", node)["metadata"].get("annotations") or {}
            known = fx.KWOK_NODE_ANNOTATION in annotations
            with self.lock:
                self.fake[node] = known
        return known

    def serve_details(self, host: str) -> dict[str, Any]:
        with self.lock:
            config = self.serve_configs.get(host, {})
        applications = {}
        for app in config.get("applications", []):
            deployments = {
                d["name"]: {"name": d["name"], "status": "HEALTHY", "message": ""}
                for d in app.get("deployments", [])
            }
            applications[app["name"]] = {
                "name": app["name"],
                "status": "RUNNING",
                "message": "",
                "route_prefix": app.get("route_prefix", "/"),
                "deployments": deployments,
            }
        return {"applications": applications, "deploy_mode": "MULTI_APP"}


def _handler(dashboards: Dashboards) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            print(f"{self.command} {self.path} -> {format % args}", flush=True)

        def _reply(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _target(self) -> tuple[str, str, str]:
            url = urlsplit(self.path)
            host = url.hostname or self.headers.get("Host", "").split(":")[0]
            labels = host.split(".")
            namespace = labels[1] if len(labels) > 2 and labels[2] == "svc" else ""
            return host, namespace, url.path

        def _forwarded(self) -> bool:
            """Relay the request to a real head's dashboard; False when the head is fake."""
            url = urlsplit(self.path)
            host, namespace, _ = self._target()
            address = dashboards.real_head(host, namespace)
            if address is None:
                return False
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            target = url.path + (f"?{url.query}" if url.query else "")
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
            connection = http.client.HTTPConnection(address, url.port or 8265, timeout=30)
            try:
                connection.request(self.command, target, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except OSError as error:
                self._reply(HTTPStatus.BAD_GATEWAY, {"detail": f"head {address}: {error}"})
                return True
            finally:
                connection.close()
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in _HOP_HEADERS and key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return True

        def do_GET(self) -> None:
            if self._forwarded():
                return
            host, namespace, path = self._target()
            if path.rstrip("/").endswith("healthz"):
                self._reply(HTTPStatus.OK, "success")
            elif path == _SERVE:
                self._reply(HTTPStatus.OK, dashboards.serve_details(host))
            elif path == "/api/jobs/":
                self._reply(HTTPStatus.OK, [])
            elif (match := _JOB.match(path)) and namespace:
                info = dashboards.job_info(namespace, match["id"])
                if info is None:
                    self._reply(HTTPStatus.NOT_FOUND, {"detail": "job not found"})
                elif match["action"] == "/logs":
                    self._reply(HTTPStatus.OK, {"logs": f"{fx.DEFAULT_POD_LOG_LINE}\n"})
                else:
                    self._reply(HTTPStatus.OK, info)
            else:
                self._reply(HTTPStatus.NOT_FOUND, {"detail": f"not served: {path}"})

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}") if length else {}

        def do_POST(self) -> None:
            if self._forwarded():
                return
            _, _, path = self._target()
            body = self._body()
            if path == "/api/jobs/":
                job_id = body.get("submission_id") or f"raysubmit_{int(time.time() * 1000)}"
                self._reply(HTTPStatus.OK, {"job_id": job_id, "submission_id": job_id})
            elif (match := _JOB.match(path)) and match["action"] == "/stop":
                self._reply(HTTPStatus.OK, {"stopped": True})
            else:
                self._reply(HTTPStatus.NOT_FOUND, {"detail": f"not served: {path}"})

        def do_PUT(self) -> None:
            if self._forwarded():
                return
            host, _, path = self._target()
            body = self._body()
            if path == _SERVE:
                with dashboards.lock:
                    dashboards.serve_configs[host] = body
                self._reply(HTTPStatus.OK, {})
            else:
                self._reply(HTTPStatus.NOT_FOUND, {"detail": f"not served: {path}"})

        def do_DELETE(self) -> None:
            if self._forwarded():
                return
            self._reply(HTTPStatus.OK, {"deleted": True})

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", type=Path, required=True)
    args = parser.parse_args()
    cluster = LocalCluster.load(args.state_dir)
    port = cluster.state.ports["ray_dashboard_proxy"]
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(Dashboards(cluster)))
    print(f"fake Ray dashboards on 127.0.0.1:{port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

"""Streaming reads: watches and pod logs.

`KubeClient.request` decodes one JSON body; a watch is a stream of JSON lines and a log is
plain text that may never end (`follow`). Both share the client's connection, credentials
and typed errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from tau.jsontypes import JSONObject
from tau.kube.client import METADATA_ONLY, KubeClient
from tau.kube.resources import PODS, Resource

if TYPE_CHECKING:
    from urllib3 import BaseHTTPResponse


def _open(
    kube: KubeClient,
    path: str,
    query: list[tuple[str, str]],
    what: str,
    timeout: tuple[float, float] | None,
    accept: str = "application/json, */*",
) -> BaseHTTPResponse:
    response = kube.send(
        "GET",
        path,
        what=what,
        query=query,
        accept=accept,
        timeout=timeout,
        stream=True,
    )
    raw: BaseHTTPResponse = response.response  # the library's RESTResponse wraps urllib3's
    return raw


def watch(
    kube: KubeClient,
    resource: Resource,
    namespace: str = "",
    *,
    label_selector: str = "",
    field_selector: str = "",
    resource_version: str = "",
    timeout_seconds: int = 30,
    metadata_only: bool = False,
) -> Iterator[JSONObject]:
    """Watch events (`{"type", "object"}`) until the server closes the stream after
    `timeout_seconds`; one API request however many objects change. With `metadata_only`
    each object is its metadata (a PartialObjectMetadata)."""
    query = [("watch", "1"), ("timeoutSeconds", str(max(1, int(timeout_seconds))))]
    if label_selector:
        query.append(("labelSelector", label_selector))
    if field_selector:
        query.append(("fieldSelector", field_selector))
    if resource_version:
        query.append(("resourceVersion", resource_version))
        query.append(("allowWatchBookmarks", "true"))
    what = f"watch {resource.display}" + (f' in namespace "{namespace}"' if namespace else "")
    accept = METADATA_ONLY if metadata_only else "application/json, */*"
    raw = _open(kube, resource.path(namespace), query, what, (5, timeout_seconds + 5), accept)
    try:
        for line in _lines(raw):
            if line.strip():
                yield json.loads(line)
    finally:
        raw.release_conn()


def pod_log(
    kube: KubeClient,
    namespace: str,
    pod: str,
    *,
    container: str = "",
    tail: int = -1,
    previous: bool = False,
    timestamps: bool = False,
    follow: bool = False,
) -> Iterator[str]:
    """Lines of one container's log (kubelet via the API server); endless with `follow`."""
    query: list[tuple[str, str]] = []
    if container:
        query.append(("container", container))
    if tail >= 0:
        query.append(("tailLines", str(tail)))
    for flag, value in (("previous", previous), ("timestamps", timestamps), ("follow", follow)):
        if value:
            query.append((flag, "true"))
    what = f'read logs of pod "{pod}"' + (f' container "{container}"' if container else "")
    what += f' in namespace "{namespace}"'
    raw = _open(kube, PODS.path(namespace, pod, "log"), query, what, None if follow else (5, 60))
    try:
        yield from _lines(raw)
    finally:
        raw.release_conn()


def _lines(raw: BaseHTTPResponse) -> Iterator[str]:
    pending = b""
    for chunk in raw.stream(4096, decode_content=True):
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            yield line.decode("utf-8", "replace")
    if pending:
        yield pending.decode("utf-8", "replace")


def get_text(kube: KubeClient, path: str, what: str) -> str:
    """GET a plain-text endpoint (e.g. a pod's metrics through the API server proxy)."""
    raw = _open(kube, path, [], what, (5, 30))
    try:
        return raw.read().decode("utf-8", "replace")
    finally:
        raw.release_conn()


def exec_output(
    kube: KubeClient, namespace: str, pod: str, container: str, command: list[str]
) -> str:
    """Run `command` in a container (pods/exec over a websocket) and return its output."""
    from kubernetes.client import CoreV1Api
    from kubernetes.client.exceptions import ApiException
    from kubernetes.stream import stream
    from websocket import WebSocketException

    from tau.kube.client import _translate
    from tau.kube.errors import UnavailableError

    api = CoreV1Api(kube._client())
    what = f'exec in pod "{pod}" container "{container}" in namespace "{namespace}"'
    try:
        output: str = stream(  # unannotated in kubernetes.stream; returns the output text
            api.connect_get_namespaced_pod_exec,
            pod,
            namespace,
            container=container,
            command=command,
            stderr=True,
            stdin=False,
            stdout=True,
            tty=False,
            _request_timeout=60,
        )
        return output
    except ApiException as error:
        status, body = error.status or 0, error.body or ""
        # A refused websocket upgrade arrives as status 0 with the HTTP answer in the reason.
        handshake = re.search(r"Handshake status (\d+)", str(error.reason or ""))
        if not status and handshake:
            status = int(handshake.group(1))
            body = str(error.reason).rsplit("-+-+-", 1)[-1].strip()
        raise _translate(
            status, body.encode() if isinstance(body, str) else body, what=what,
            target=kube.target, host=kube.host,
        ) from None  # fmt: skip
    except (WebSocketException, OSError, ValueError) as error:
        status = getattr(error, "status_code", 0)  # the handshake's HTTP answer, if any
        if status:
            answer = getattr(error, "resp_body", b"") or b""
            raise _translate(
                status, answer if isinstance(answer, bytes) else str(answer).encode(), what=what,
                target=kube.target, host=kube.host,
            ) from None  # fmt: skip
        raise UnavailableError(f"cannot {what}: {type(error).__name__}: {error}") from None

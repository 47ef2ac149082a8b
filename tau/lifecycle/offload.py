"""A RayJob's driver output from the central log offload (ADX `Logs.ContainerLogs`).

KubeRay deletes a finished RayJob's head pod (and later the RayJob), taking the driver log
with it. Where the platform ships container logs to Azure Data Explorer (adx-mon's collector
writes each line as a row whose `Resource` holds `cluster`, `namespace`, `pod` and
`adxmon_container`), `tau logs` reads the head pod's driver-log container from there instead.

The connection is the three values of `--kusto-cluster`, `--kusto-endpoint` and
`--kusto-database`, each flag overriding the workspace's ConfigMap `tau-log-connection`
(key `connection.json`, schema `tau.logs.connection.v1`), which the tau-core controller
publishes in every workspace namespace from the chart's `logOffload.kusto` values, so
researchers need not know them. The cluster is the exact `Cluster` value the collector
writes: tau never guesses it from the kube context, which has no stable observability name.

The query goes to Kusto's v2 REST endpoint (`POST <endpoint>/v2/rest/query`) as the signed-in
Azure identity; run, namespace and container travel as declared query parameters, never
spliced into the query text. The endpoint must be `https` with no path, query or
credentials: it receives a bearer token.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import Request, urlopen

from tau import keys
from tau.errors import RuntimeFailure, UsageError
from tau.jsontypes import JSONObject, JSONValue

TIMEOUT = 60.0
_FLAGS = {
    "cluster": "--kusto-cluster",
    "endpoint": "--kusto-endpoint",
    "database": "--kusto-database",
}
_OWNER = "platform operator (ConfigMap tau-log-connection)"


@dataclass(frozen=True)
class LogOffload:
    """The ADX identity of the log offload; empty fields are filled from the ConfigMap."""

    cluster: str = ""
    endpoint: str = ""
    database: str = ""

    def given(self) -> bool:
        return bool(self.cluster or self.endpoint or self.database)


def check_endpoint(endpoint: str, where: str, owner: str) -> str:
    """The endpoint without a trailing slash; refused unless a bare `https://host[:port]`."""
    try:
        parts = urlsplit(endpoint.strip())
        parts.port  # noqa: B018 - parses the port; a malformed one raises ValueError
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme != "https"
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise UsageError(
            f"{where} must be an https ADX query endpoint with no path, query or credentials "
            f"(https://<cluster>.<region>.kusto.windows.net)",
            owner=owner,
        )
    return f"https://{parts.netloc}"


def flag_connection(flags: LogOffload) -> LogOffload:
    """The flags' values, the endpoint checked before anything is read (exit 2)."""
    if not flags.endpoint:
        return flags
    endpoint = check_endpoint(flags.endpoint, "--kusto-endpoint", "researcher: --kusto-endpoint")
    return replace(flags, endpoint=endpoint)


def publication(where: LogOffload) -> dict[str, str]:
    """The data of ConfigMap `tau-log-connection` that `published_connection` reads back: the
    tau-core controller writes it into every workspace namespace. Keys are sorted so the same
    connection is always the same text, and an unchanged one is never rewritten."""
    body = {
        "schema": keys.LOG_CONNECTION_SCHEMA,
        "endpoint": where.endpoint,
        "database": where.database,
        "cluster": where.cluster,
    }
    return {keys.LOG_CONNECTION_KEY: json.dumps(body, sort_keys=True)}


def published_connection(configmap: JSONObject | None, namespace: str) -> LogOffload:
    """The connection the platform published in the workspace, empty when it published none."""
    if configmap is None:
        return LogOffload()
    where = f"ConfigMap {namespace}/{keys.LOG_CONNECTION_CONFIGMAP}"
    raw = (configmap.get("data") or {}).get(keys.LOG_CONNECTION_KEY)
    try:
        data = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise RuntimeFailure(
            f"{where} has no JSON object under key {keys.LOG_CONNECTION_KEY}", owner=_OWNER
        )
    if data.get("schema") != keys.LOG_CONNECTION_SCHEMA:
        raise RuntimeFailure(
            f"{where}: schema {str(data.get('schema'))[:40]!r} is not {keys.LOG_CONNECTION_SCHEMA}",
            owner=_OWNER,
        )
    values = {name: data.get(name) for name in _FLAGS}
    wrong = [name for name, value in values.items() if not isinstance(value, str) or not value]
    if wrong:
        raise RuntimeFailure(f"{where}: {', '.join(wrong)} must be non-empty strings", owner=_OWNER)
    try:
        endpoint = check_endpoint(str(values["endpoint"]), f"{where} endpoint", _OWNER)
    except UsageError as error:  # the platform's publication, not the researcher's input
        raise RuntimeFailure(error.message, owner=_OWNER) from None
    return LogOffload(str(values["cluster"]), endpoint, str(values["database"]))


def connection(flags: LogOffload, published: LogOffload, namespace: str) -> LogOffload:
    """Each flag over the published value; every field must end up set."""
    chosen = LogOffload(
        flags.cluster or published.cluster,
        flags.endpoint or published.endpoint,
        flags.database or published.database,
    )
    missing = [_FLAGS[name] for name in _FLAGS if not getattr(chosen, name)]
    if missing:
        raise UsageError(
            f"reading the central log offload needs {', '.join(missing)}",
            hint=f"pass {', '.join(_FLAGS.values())}, or ask the platform team to set chart "
            f"values {keys.LOG_OFFLOAD_VALUES}, which publishes ConfigMap "
            f"{keys.LOG_CONNECTION_CONFIGMAP} in namespace {namespace}",
            owner="researcher: --kusto-* flags",
        )
    return chosen


def logs_query(tail: int) -> str:
    """The head pod's container lines, oldest first; the last `tail` of them when tail >= 0."""
    lines = [
        "declare query_parameters(tau_cluster:string, tau_namespace:string, "
        "tau_pod_prefix:string, tau_container:string);",
        keys.LOG_OFFLOAD_TABLE,
        "| extend tau_pod = tostring(Resource.pod), "
        "tau_container_name = tostring(Resource.adxmon_container)",
        "| where tostring(Resource.cluster) == tau_cluster",
        "| where tostring(Resource.namespace) == tau_namespace",
        "| where tau_pod startswith tau_pod_prefix",
        "| where isempty(tau_container) or tau_container_name == tau_container",
    ]
    if tail >= 0:
        lines.append(f"| top {tail} by Timestamp desc")
    lines += [
        "| order by Timestamp asc",
        "| project Timestamp, Pod = tau_pod, Container = tau_container_name, Body",
    ]
    return "\n".join(lines)


def _primary_rows(frames: JSONValue) -> list[JSONObject]:
    """Rows of the PrimaryResult table of a v2 REST answer; a reported error is raised."""
    if not isinstance(frames, list):
        raise ValueError("not a v2 frame list")
    rows: list[JSONObject] = []
    found = False
    for frame in frames:
        if not isinstance(frame, dict):
            raise ValueError("a v2 frame is not an object")
        if frame.get("FrameType") == "DataSetCompletion" and frame.get("HasErrors"):
            raise LookupError(_one_api_error(frame))
        if frame.get("FrameType") != "DataTable" or frame.get("TableKind") != "PrimaryResult":
            continue
        found = True
        names = [column["ColumnName"] for column in frame["Columns"]]
        for values in frame["Rows"]:
            if isinstance(values, dict):  # an error row in the middle of a partial result
                raise LookupError(_one_api_error(values))
            rows.append(dict(zip(names, values, strict=True)))
    if not found:
        raise ValueError("no PrimaryResult table")
    return rows


def _one_api_error(holder: JSONObject) -> str:
    errors = holder.get("OneApiErrors") or [{}]
    error = errors[0].get("error", {}) if isinstance(errors[0], dict) else {}
    return str(error.get("@message") or error.get("message") or "the query failed")[:200]


def _text(body: JSONValue) -> str:
    """A log row's line: adx-mon keeps a container line under Body.message."""
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(message, str):
        return message.rstrip("\n")
    if isinstance(body, str):
        return body.rstrip("\n")
    return json.dumps(body)


def query(
    where: LogOffload,
    csl: str,
    parameters: dict[str, str],
    token: Callable[[], str],
    timeout: float = TIMEOUT,
) -> list[JSONObject]:
    shown = f"ADX {where.endpoint} database {where.database}"
    body = json.dumps(
        {"db": where.database, "csl": csl, "properties": {"Parameters": parameters}}
    ).encode()
    request = Request(
        f"{where.endpoint}/v2/rest/query",
        data=body,
        method="POST",
        headers={
            "Authorization": f"Bearer {token()}",
            "Content-Type": "application/json; charset=utf-8",
            "Accept": "application/json",
        },
    )
    try:
        with urlopen(request, timeout=timeout) as response:
            frames = json.loads(response.read())
    except HTTPError as error:
        detail = error.read()[:200].decode("utf-8", "replace")
        denied = error.code in (401, 403)
        raise RuntimeFailure(
            f"log query to {shown} answered HTTP {error.code}: {detail}",
            hint="your Azure identity needs the Viewer role on the logs database"
            if denied
            else f"check that table {keys.LOG_OFFLOAD_TABLE} exists in database {where.database}",
            owner="platform operator (log offload)",
        ) from None
    except (URLError, OSError, TimeoutError) as error:
        raise RuntimeFailure(
            f"log query to {shown} failed: {getattr(error, 'reason', error)}",
            hint="check the --kusto-endpoint value and your network path to ADX",
            owner="researcher: --kusto-endpoint",
        ) from None
    except ValueError:
        raise RuntimeFailure(f"log query to {shown} returned no JSON") from None
    try:
        return _primary_rows(frames)
    except LookupError as error:
        raise RuntimeFailure(
            f"log query to {shown} failed: {error}",
            hint=f"check that table {keys.LOG_OFFLOAD_TABLE} exists in database {where.database}",
            owner="platform operator (log offload)",
        ) from None
    except (KeyError, TypeError, ValueError, AttributeError):
        raise RuntimeFailure(f"log query to {shown} returned no query result table") from None


def azure_token(endpoint: str) -> Callable[[], str]:
    """Bearer tokens for ADX as the signed-in Azure identity (TAU_AUTH_MODE picks the sign-in,
    as for AKS connections)."""
    from tau.connection import azure_credential

    scope = endpoint.rstrip("/") + "/.default"

    def token() -> str:
        try:
            credential = azure_credential("")
        except ImportError:
            raise RuntimeFailure(
                "reading the central log offload needs azure-identity",
                hint="pip install 'taugrid[adx]'",
                owner="researcher: the tau installation",
            ) from None
        try:
            return credential.get_token(scope).token
        except Exception as error:  # azure-identity raises many unrelated types
            raise RuntimeFailure(
                f"Azure sign-in for {scope} failed ({type(error).__name__})",
                hint=f"sign in (`az login`) or set {keys.ENV_AUTH_MODE}",
                owner="researcher: Azure sign-in",
            ) from None

    return token


@dataclass(frozen=True)
class OffloadRead:
    """One read of a head pod's offloaded lines: which pod prefix and container, how many."""

    namespace: str
    pod_prefix: str
    container: str
    tail: int
    timestamps: bool


def offloaded_lines(
    where: LogOffload, read: OffloadRead, token: Callable[[], str]
) -> Iterator[tuple[str, str]]:
    """(label, line) per offloaded row, oldest first; label is `[pod/<pod>/<container>] `."""
    rows = query(
        where,
        logs_query(read.tail),
        {
            "tau_cluster": where.cluster,
            "tau_namespace": read.namespace,
            "tau_pod_prefix": read.pod_prefix,
            "tau_container": read.container,
        },
        token,
    )
    for row in rows:
        line = _text(row.get("Body"))
        if read.timestamps:
            line = f"{row.get('Timestamp', '')} {line}"
        yield f"[pod/{row.get('Pod', '')}/{row.get('Container', '')}] ", line

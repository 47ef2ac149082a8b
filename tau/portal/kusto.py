"""ADX (Kusto) for lifecycle rows: the table/mapping/function KQL and queued ingestion.

The KQL is generated from the one column list in `tau.evidence.lifecycle.COLUMNS`, so the
store table, the ADX table, its JSON mapping and the rows the recorder sends cannot drift.
`taugrid-portal experiment kusto schema --ingestion lifecycle` prints it for review; the
chart's adx-mon ManagementCommand ships the same text (a test compares them).

Queued ingestion is ADX's own protocol over HTTPS: ask the ingestion endpoint for its
temporary storage and queue (`.get ingestion resources`) and an authorization context
(`.get kusto identity token`), upload the gzip NDJSON batch as a blob, then post a queue
message naming database, table, mapping and an `ingest-by:` tag. The tag is derived from the
batch's observation ids and also sent as `ingestIfNotExists`, so a retried batch is ingested
once.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit, urlunsplit
from urllib.request import Request, urlopen

from tau.errors import RuntimeFailure
from tau.evidence import lifecycle

TABLE = lifecycle.TABLE
STALE_AFTER = "1d"
RETRIES = 2


def lifecycle_kql(table: str = TABLE) -> str:
    """Idempotent table, JSON ingestion mapping and dashboard function for lifecycle rows."""
    columns = ", ".join(f"{name}:{kind}" for name, kind in lifecycle.COLUMNS)
    mapping = json.dumps(
        [
            {"column": name, "path": f"$.{name}", "datatype": kind}
            for name, kind in lifecycle.COLUMNS
        ],
        separators=(",", ":"),
    )
    terminal = ", ".join(f'"{s}"' for s in lifecycle.TERMINAL)
    return "\n".join(
        [
            f"// TauGrid lifecycle rows ({lifecycle.VERSION}); generated, review before use.",
            f".create-merge table {table} ({columns})",
            "",
            f".create-or-alter table {table} ingestion json mapping \"{table}Mapping\" '{mapping}'",
            "",
            f'.create-or-alter function with (folder="TauGrid", docstring="Latest lifecycle '
            f'row per run; terminal states are final") {table}DashboardRows() {{',
            f"    {table}",
            "    | summarize arg_max(ingestion_time(), *) by observation_id",
            f"    | extend _terminal = iff(state in ({terminal}), 1, 0)",
            "    | summarize arg_max(observed_at, *) by durable_id, _terminal",
            "    | summarize arg_max(_terminal, *) by durable_id",
            "    | extend state = iff(_terminal == 0 and observed_at < "
            f'ago({STALE_AFTER}), "stale", state)',
            "    | project-away _terminal",
            "}",
            "",
        ]
    )


def lifecycle_script(table: str = TABLE) -> str:
    """The same commands as one `.execute database script`, the body of the chart's adx-mon
    ManagementCommand (charts/taugrid/charts/taugrid-core/files/lifecycle-schema.kql)."""
    commands = [line for line in lifecycle_kql(table).splitlines() if not line.startswith("//")]
    return ".execute database script <|\n" + "\n".join(commands).strip() + "\n"


def ingest_endpoint(endpoint: str) -> str:
    """ADX's ingestion (data management) endpoint: `https://ingest-<cluster>...`."""
    parts = urlsplit(endpoint.rstrip("/"))
    return urlunsplit(parts._replace(netloc="ingest-" + parts.netloc))


def batch_tag(rows: list[dict[str, Any]]) -> str:
    ids = "\n".join(sorted(str(r.get("observation_id", "")) for r in rows))
    return "tau-lifecycle-" + hashlib.sha256(ids.encode()).hexdigest()[:32]


def ndjson(rows: list[dict[str, Any]]) -> bytes:
    names = lifecycle.NAMES
    lines = []
    for row in rows:
        record = {}
        for name, kind in lifecycle.COLUMNS:
            value = row.get(name)
            if kind == "datetime" and not value:
                continue  # zero/unknown times are omitted
            if kind == "dynamic":
                value = value or {}
            record[name] = value
        lines.append(json.dumps({k: record[k] for k in names if k in record}, default=str))
    return ("\n".join(lines) + "\n").encode()


@dataclass
class KustoSink:
    """Queued ingestion of lifecycle rows into one ADX table."""

    endpoint: str
    database: str = "Metrics"
    table: str = TABLE
    token: Callable[[], str] = lambda: ""
    timeout: float = 120.0
    ingest: str = ""
    name: str = "adx"

    def __post_init__(self) -> None:
        self.ingest = (self.ingest or ingest_endpoint(self.endpoint)).rstrip("/")

    def seed(self, scope: Any) -> dict[str, dict[str, Any]]:
        return {}  # the recorder's identity is an Ingestor: it cannot read the table back

    def _call(
        self, method: str, url: str, body: bytes, headers: dict[str, str], what: str
    ) -> bytes:
        request = Request(url, data=body, method=method, headers=headers)
        try:
            with urlopen(request, timeout=self.timeout) as response:
                answer: bytes = response.read()
                return answer
        except HTTPError as error:
            detail = error.read()[:200].decode("utf-8", "replace")
            raise RuntimeFailure(
                f"ADX ingestion: {what} answered HTTP {error.code}: {detail}",
                hint="check the recorder identity's Ingestor role and the table's schema",
                owner="platform operator (lifecycleRecorder.kusto)",
            ) from None
        except (URLError, OSError, TimeoutError) as error:
            reason = getattr(error, "reason", error)
            raise RuntimeFailure(
                f"ADX ingestion: {what} failed: {reason}",
                hint="check the network path to the ADX ingestion endpoint",
                owner="platform operator (lifecycleRecorder.kusto)",
            ) from None

    def _mgmt(self, csl: str) -> list[list[Any]]:
        body = json.dumps({"csl": csl, "db": self.database}).encode()
        headers = {
            "Authorization": f"Bearer {self.token()}",
            "Content-Type": "application/json; charset=utf-8",
            "Accept": "application/json",
        }
        data = self._call("POST", f"{self.ingest}/v1/rest/mgmt", body, headers, csl)
        try:
            return list(json.loads(data)["Tables"][0]["Rows"])
        except (ValueError, KeyError, IndexError, TypeError):
            raise RuntimeFailure(
                f"ADX ingestion: {csl} returned no table", owner="platform operator"
            ) from None

    def write(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        failure: RuntimeFailure | None = None
        for _ in range(RETRIES + 1):
            try:
                self._ingest(rows)
                return
            except RuntimeFailure as error:
                failure = error
        assert failure is not None
        raise failure

    def _ingest(self, rows: list[dict[str, Any]]) -> None:
        resources: dict[str, list[str]] = {}
        for kind, root in self._mgmt(".get ingestion resources"):
            resources.setdefault(str(kind), []).append(str(root))
        context = self._mgmt(".get kusto identity token")[0][0]
        queues = resources.get("SecuredReadyForAggregationQueue") or []
        storages = resources.get("TempStorage") or []
        if not queues or not storages:
            raise RuntimeFailure(
                "ADX ingestion: the endpoint offered no temporary storage or queue",
                owner="platform operator",
            )
        tag = batch_tag(rows)
        raw = ndjson(rows)
        blob_name = f"{self.database}__{self.table}__{tag}__{uuid.uuid4().hex}.multijson.gz"
        container, _, sas = storages[0].partition("?")
        blob = f"{container}/{blob_name}" + (f"?{sas}" if sas else "")
        self._call(
            "PUT",
            blob,
            gzip.compress(raw),
            {"x-ms-blob-type": "BlockBlob", "Content-Type": "application/octet-stream"},
            "upload of the batch blob",
        )
        message = {
            "Id": str(uuid.uuid4()),
            "BlobPath": blob,
            "RawDataSize": len(raw),
            "DatabaseName": self.database,
            "TableName": self.table,
            "RetainBlobOnSuccess": False,
            "FlushImmediately": False,
            "ReportLevel": 0,
            "ReportMethod": 0,
            "AdditionalProperties": {
                "authorizationContext": context,
                "format": "multijson",
                "ingestionMappingReference": f"{self.table}Mapping",
                "tags": json.dumps([f"ingest-by:{tag}"]),
                "ingestIfNotExists": json.dumps([tag]),
            },
        }
        encoded = base64.b64encode(json.dumps(message).encode()).decode()
        queue, _, sas = queues[0].partition("?")
        xml = f"<QueueMessage><MessageText>{encoded}</MessageText></QueueMessage>".encode()
        self._call(
            "POST",
            f"{queue}/messages" + (f"?{sas}" if sas else ""),
            xml,
            {"Content-Type": "application/xml"},
            "queueing of the ingestion message",
        )


def azure_token(
    endpoint: str, owner: str = "platform operator (lifecycleRecorder.serviceAccount)"
) -> Callable[[], str]:
    """Bearer tokens for ADX from DefaultAzureCredential (workload identity in the pod)."""
    try:
        from azure.identity import DefaultAzureCredential
    except ImportError:
        raise RuntimeFailure(
            "the ADX sink needs azure-identity",
            hint="pip install 'taugrid[azure]'",
            owner="platform operator (the image)",
        ) from None
    credential = DefaultAzureCredential()
    scope = endpoint.rstrip("/") + "/.default"

    def token() -> str:
        try:
            return credential.get_token(scope).token
        except Exception as error:  # azure-identity raises many unrelated types
            raise RuntimeFailure(
                f"ADX: no token for {scope}: {type(error).__name__}",
                hint="check the ServiceAccount's azure.workload.identity/client-id and its "
                "federated credential",
                owner=owner,
            ) from None

    return token

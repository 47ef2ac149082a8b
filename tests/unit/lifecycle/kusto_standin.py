"""A local HTTPS stand-in for ADX's query endpoint holding a `ContainerLogs` table.

Azure cannot be reached from here. The stand-in answers `POST /v2/rest/query` the way ADX
does for the container-log query of tau/lifecycle/offload.py: it evaluates the declared
query parameters (cluster, namespace, pod prefix, container) and the `top N` against the
rows it holds, in adx-mon's shape (`Resource` holds cluster, namespace, pod and
adxmon_container; the line is `Body.message`), and answers in the v2 frame shape
(DataSetHeader, the QueryProperties/PrimaryResult/QueryCompletionInformation tables,
DataSetCompletion). It serves TLS with a certificate the test trusts through SSL_CERT_FILE,
as the endpoint must be https. Only the bearer token it is told to expect is accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.unit.https_standin import JsonHandler, serve_https

COLUMNS = [("Timestamp", "datetime"), ("Pod", "string"), ("Container", "string")]


@dataclass
class KustoStandIn:
    url: str = ""
    cert: Path = Path()
    token: str = "adx-access-token-0123456789abcdef"
    rows: list[dict[str, Any]] = field(default_factory=list)
    queries: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    query_error: str = ""

    def line(
        self,
        at: str,
        message: str,
        *,
        pod: str,
        container: str = "driver-log",
        namespace: str = "research",
        cluster: str = "aks-eus-1",
    ) -> None:
        resource = {
            "cluster": cluster,
            "namespace": namespace,
            "pod": pod,
            "adxmon_container": container,
        }
        self.rows.append({"Timestamp": at, "Resource": resource, "Body": {"message": message}})

    def answer(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        p = request["properties"]["Parameters"]
        hits = [
            r
            for r in self.rows
            if r["Resource"]["cluster"] == p["tau_cluster"]
            and r["Resource"]["namespace"] == p["tau_namespace"]
            and r["Resource"]["pod"].startswith(p["tau_pod_prefix"])
            and (not p["tau_container"] or r["Resource"]["adxmon_container"] == p["tau_container"])
        ]
        top = re.search(r"\| top (\d+) by Timestamp desc", request["csl"])
        if top:
            hits = sorted(hits, key=lambda r: r["Timestamp"], reverse=True)[: int(top.group(1))]
        hits.sort(key=lambda r: r["Timestamp"])
        values = [
            [r["Timestamp"], r["Resource"]["pod"], r["Resource"]["adxmon_container"], r["Body"]]
            for r in hits
        ]
        columns = [{"ColumnName": n, "ColumnType": t} for n, t in [*COLUMNS, ("Body", "dynamic")]]
        primary = {
            "FrameType": "DataTable",
            "TableId": 1,
            "TableKind": "PrimaryResult",
            "TableName": "PrimaryResult",
            "Columns": columns,
            "Rows": values,
        }
        if self.query_error:
            error = {"code": "LimitsExceeded", "@message": self.query_error}
            primary["Rows"] = [*values, {"OneApiErrors": [{"error": error}]}]
        return [
            {"FrameType": "DataSetHeader", "IsProgressive": False, "Version": "v2.0"},
            {
                "FrameType": "DataTable",
                "TableId": 0,
                "TableKind": "QueryProperties",
                "TableName": "@ExtendedProperties",
                "Columns": [{"ColumnName": "Value", "ColumnType": "dynamic"}],
                "Rows": [[{"Visualization": None}]],
            },
            primary,
            {
                "FrameType": "DataTable",
                "TableId": 2,
                "TableKind": "QueryCompletionInformation",
                "TableName": "QueryCompletionInformation",
                "Columns": [{"ColumnName": "EventTypeName", "ColumnType": "string"}],
                "Rows": [["QueryInfo"]],
            },
            {"FrameType": "DataSetCompletion", "HasErrors": bool(self.query_error)},
        ]


@pytest.fixture
def kusto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KustoStandIn]:
    state = KustoStandIn()

    class Handler(JsonHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path != "/v2/rest/query":
                return self.send_json(404, {"error": {"code": "NotFound"}})
            request = json.loads(body)
            authorization = self.headers.get("Authorization", "")
            state.queries.append({**request, "authorization": authorization})
            if authorization != f"Bearer {state.token}":
                return self.send_json(401, {"error": {"code": "Unauthorized"}})
            if state.status != 200:
                return self.send_json(state.status, {"error": {"code": "Forbidden"}})
            return self.send_json(200, state.answer(request))

    with serve_https(Handler, tmp_path, "adx-stand-in") as (state.url, state.cert):
        monkeypatch.setenv("SSL_CERT_FILE", str(state.cert))
        yield state

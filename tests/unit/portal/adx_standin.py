"""A local HTTP stand-in for ADX: queued ingestion in, the lifecycle query out.

Azure cannot be reached from here, so the stand-in plays ADX's ingestion endpoint (the two
management commands), its temporary blob storage and its ingestion queue, records what the
recorder sent, and "ingests" each queued blob into its table. Its query endpoint
(`/v1/rest/query`) answers the Portal's `<table>DashboardRows()` query the way the function
the lifecycle KQL creates does (latest row per durable id, terminal states final), for the
workspace and limit passed as declared query parameters, in the v1 REST answer shape.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tau.evidence import lifecycle


class StandIn:
    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[str] = []
        self.fail_blob_puts = 0
        self.queries: list[dict[str, Any]] = []
        self.query_status = 200
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _answer(self, code: int, data: Any = None) -> None:
                raw = json.dumps(data or {}).encode()
                self.send_response(code)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                body = self._body()
                if self.path == "/v1/rest/mgmt":
                    stand_in.tokens.append(self.headers.get("Authorization", ""))
                    csl = json.loads(body)["csl"]
                    if csl == ".get ingestion resources":
                        rows = [
                            ["SecuredReadyForAggregationQueue", f"{stand_in.url}/queue?sig=q"],
                            ["TempStorage", f"{stand_in.url}/blobs?sig=b"],
                        ]
                    else:
                        rows = [["authorization-context"]]
                    return self._answer(200, {"Tables": [{"Rows": rows}]})
                if self.path == "/v1/rest/query":
                    request = json.loads(body)
                    stand_in.queries.append(
                        {**request, "authorization": self.headers.get("Authorization", "")}
                    )
                    if stand_in.query_status != 200:
                        return self._answer(stand_in.query_status, {"error": "Forbidden"})
                    return self._answer(200, stand_in.answer(request))
                if self.path == "/queue/messages?sig=q":
                    text = re.search(rb"<MessageText>(.*)</MessageText>", body).group(1)
                    stand_in.messages.append(json.loads(base64.b64decode(text)))
                    return self._answer(201)
                return self._answer(404)

            def do_PUT(self) -> None:
                body = self._body()
                if stand_in.fail_blob_puts:
                    stand_in.fail_blob_puts -= 1
                    return self._answer(503, {"error": "busy"})
                name = self.path.split("?", 1)[0].removeprefix("/blobs/")
                stand_in.blobs[name] = body
                return self._answer(201)

            def log_message(self, *_: Any) -> None:
                pass

        return Handler

    def table(self) -> list[dict[str, Any]]:
        """Every row of every queued blob, in ingestion order."""
        rows = []
        for message in self.messages:
            name = message["BlobPath"].split("?", 1)[0].rsplit("/", 1)[-1]
            text = gzip.decompress(self.blobs[name]).decode()
            rows += [json.loads(line) for line in text.splitlines()]
        return rows

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        parameters = request["properties"]["Parameters"]
        current: dict[str, dict[str, Any]] = {}
        for row in sorted(self.table(), key=lambda r: r["observed_at"]):
            seen = current.get(row["durable_id"])
            terminal = lifecycle.TERMINAL
            if seen and seen["state"] in terminal and row["state"] not in terminal:
                continue
            current[row["durable_id"]] = row
        rows = [r for r in current.values() if r.get("workspace_id") == parameters["tau_workspace"]]
        rows.sort(key=lambda r: r["observed_at"], reverse=True)
        columns = [
            {"ColumnName": name, "DataType": kind, "ColumnType": kind}
            for name, kind in lifecycle.COLUMNS
        ]
        top = rows[: int(parameters["tau_limit"])]
        values = [[r.get(name) for name in lifecycle.NAMES] for r in top]
        return {"Tables": [{"TableName": "Table_0", "Columns": columns, "Rows": values}]}


@pytest.fixture
def adx() -> Iterator[StandIn]:
    stand_in = StandIn()
    threading.Thread(target=stand_in.server.serve_forever, daemon=True).start()
    yield stand_in
    stand_in.server.shutdown()

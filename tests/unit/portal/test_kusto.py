"""The ADX sink against a local HTTP stand-in of Kusto's queued-ingestion endpoints.

Azure cannot be reached from here, so the stand-in plays ADX's ingestion endpoint (the two
management commands), its temporary blob storage and its ingestion queue, and records what
the recorder sent.
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

from tau.errors import RuntimeFailure
from tau.evidence import lifecycle
from tau.portal.kusto import KustoSink, batch_tag, lifecycle_kql


class StandIn:
    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[str] = []
        self.fail_blob_puts = 0
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


@pytest.fixture
def adx() -> Iterator[StandIn]:
    stand_in = StandIn()
    threading.Thread(target=stand_in.server.serve_forever, daemon=True).start()
    yield stand_in
    stand_in.server.shutdown()


def _rows() -> list[dict[str, Any]]:
    return [
        {
            "observed_at": "2026-01-01T00:00:00Z",
            "observation_id": f"obs-{state}",
            "durable_id": "aks-1/team-a/uid-1",
            "run_id": "train",
            "tags": {"lr": "0.1"},
            "generation": 1,
            "state": state,
            "kueue_admitted_time": "",
        }
        for state in ("submitted", "queued")
    ]


def _sink(adx: StandIn) -> KustoSink:
    return KustoSink(
        "https://adx.example.kusto.windows.net",
        "Metrics",
        token=lambda: "token-1",
        ingest=adx.url,
        timeout=5,
    )


def test_a_batch_is_uploaded_as_gzip_ndjson_and_queued_with_its_mapping_and_tag(adx) -> None:
    rows = _rows()
    _sink(adx).write(rows)

    [blob] = adx.blobs.values()
    sent = [json.loads(line) for line in gzip.decompress(blob).decode().splitlines()]
    assert [r["state"] for r in sent] == ["submitted", "queued"]
    assert "kueue_admitted_time" not in sent[0], "unknown times are omitted"
    assert sent[0]["tags"] == {"lr": "0.1"}
    assert list(sent[0]) == [n for n in lifecycle.NAMES if n in sent[0]]
    [message] = adx.messages
    assert message["DatabaseName"] == "Metrics"
    assert message["TableName"] == "TauExpRunLifecycle"
    props = message["AdditionalProperties"]
    assert props["format"] == "multijson"
    assert props["ingestionMappingReference"] == "TauExpRunLifecycleMapping"
    assert props["authorizationContext"] == "authorization-context"
    assert json.loads(props["tags"]) == [f"ingest-by:{batch_tag(rows)}"]
    assert json.loads(props["ingestIfNotExists"]) == [batch_tag(rows)]
    assert set(adx.tokens) == {"Bearer token-1"}


def test_a_transient_failure_is_retried_and_the_batch_queued_once(adx) -> None:
    adx.fail_blob_puts = 1
    _sink(adx).write(_rows())
    assert len(adx.messages) == 1 and len(adx.blobs) == 1


def test_a_persistent_failure_is_one_line_naming_the_layer_and_owner(adx) -> None:
    adx.fail_blob_puts = 10
    with pytest.raises(RuntimeFailure) as failure:
        _sink(adx).write(_rows())
    line = failure.value.one_line()
    assert "HTTP 503" in line and "lifecycleRecorder.kusto" in line and "\n" not in line
    assert adx.messages == []


def test_the_kql_declares_every_row_column_in_the_table_and_the_json_mapping() -> None:
    kql = lifecycle_kql()
    table = re.search(r"\.create-merge table TauExpRunLifecycle \((.*)\)", kql).group(1)
    assert [c.split(":")[0] for c in table.split(", ")] == list(lifecycle.NAMES)
    mapping = json.loads(re.search(r"mapping \"TauExpRunLifecycleMapping\" '(.*)'", kql).group(1))
    assert [m["column"] for m in mapping] == list(lifecycle.NAMES)
    assert all(m["path"] == f"$.{m['column']}" for m in mapping)
    assert "TauExpRunLifecycleDashboardRows()" in kql

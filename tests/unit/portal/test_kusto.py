"""The ADX sink against a local HTTP stand-in of Kusto's queued-ingestion endpoints
(tests/unit/portal/adx_standin.py: Azure cannot be reached from here)."""

from __future__ import annotations

import gzip
import json
import re
from typing import Any

import pytest

from tau.errors import RuntimeFailure
from tau.evidence import lifecycle
from tau.portal.kusto import KustoSink, batch_tag, lifecycle_kql

from .adx_standin import StandIn, adx

__all__ = ["adx"]


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

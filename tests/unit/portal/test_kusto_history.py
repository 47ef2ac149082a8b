"""Durable run history from ADX (`--source kusto`): the recorder's rows, queued into a local
stand-in of ADX by the real sink, read back by the Portal's Runs board through the query
endpoint (tests/unit/portal/adx_standin.py: Azure cannot be reached from here)."""

from __future__ import annotations

import copy

import pytest

from tau.errors import UsageError
from tau.portal.kusto import KustoSink
from tau.portal.web.config import PortalConfig
from tau.portal.web.kusto_history import KustoHistoryReader, history_query

from .adx_standin import StandIn, adx
from .web_helpers import client, portal, recorded

__all__ = ["adx"]

NS = "research"
ENDPOINT = "https://adx.westus.kusto.windows.net"


def _row(name: str, state: str, at: str, workspace: str = "ws", **extra) -> dict:
    return {
        "observed_at": at,
        "observation_id": f"{name}-{state}-{at}",
        "durable_id": f"aks-1/{NS}/uid-{name}",
        "run_id": name,
        "workspace_id": workspace,
        "owning_resource_kind": "Job",
        "owning_resource_name": name,
        "namespace": NS,
        "cluster": "aks-1",
        "resource_uid": f"uid-{name}",
        "state": state,
        "reason": "",
        "tags": {"team": "vision"},
        **extra,
    }


def _record(adx: StandIn, rows: list[dict]) -> None:
    KustoSink(ENDPOINT, "Metrics", token=lambda: "writer", ingest=adx.url, timeout=5).write(rows)


def _config(**overrides) -> PortalConfig:
    fields = {
        "namespaces": (NS,),
        "workspace": "ws",
        "cluster": "aks-1",
        "run_history_enabled": True,
        "source": "kusto",
        "kusto_endpoint": ENDPOINT,
    }
    return PortalConfig(**(fields | overrides))


def _reader(adx: StandIn, **kwargs) -> KustoHistoryReader:
    return KustoHistoryReader(adx.url, "Metrics", "ws", 200, token=lambda: "reader", **kwargs)


def test_runs_recorded_into_adx_stay_on_the_runs_board_after_their_jobs_are_gone(adx) -> None:
    _record(
        adx,
        [
            _row("gone", "submitted", "2026-01-01T00:00:00Z"),
            _row("gone", "running", "2026-01-01T00:01:00Z"),
            _row("gone", "failed", "2026-01-01T00:05:00Z", reason="BackoffLimitExceeded"),
            _row("gone", "running", "2026-01-01T00:06:00Z"),  # a stale relist after the end
            _row("elsewhere", "running", "2026-01-01T00:05:00Z", workspace="other"),
        ],
    )
    live = copy.deepcopy(recorded("completed")["job"])
    body = client(portal(_config(), [live], _reader(adx))).get("/api/portal/runs").json()

    assert body["historyState"] == "available" and body["scope"]["source"] == "kusto"
    by_name = {r["name"]: r for r in body["runs"]}
    assert set(by_name) == {"completed", "gone"}, "another workspace's history is not shown"
    gone = by_name["gone"]
    assert (gone["status"], gone["historyOnly"], gone["source"]) == ("Failed", True, "history")
    assert gone["reason"] == "BackoffLimitExceeded", "a terminal state is final"
    assert by_name["completed"]["source"] == "tau", "the live row wins"


def test_the_query_is_the_dashboard_function_with_the_workspace_as_a_parameter(adx) -> None:
    hostile = 'ws" or 1==1 | take 1'
    reader = KustoHistoryReader(adx.url, "Metrics", hostile, 50, token=lambda: "reader")
    client(portal(_config(), [], reader)).get("/api/portal/runs")
    [query] = adx.queries
    assert query["db"] == "Metrics" and query["authorization"] == "Bearer reader"
    assert query["csl"] == history_query("TauExpRunLifecycle")
    assert "TauExpRunLifecycleDashboardRows()" in query["csl"]
    assert query["properties"]["Parameters"] == {"tau_workspace": hostile, "tau_limit": "50"}
    assert "1==1" not in query["csl"], "values never enter the query text"


def test_page_loads_within_the_refresh_interval_cost_one_query(adx) -> None:
    http = client(portal(_config(), [], _reader(adx, refresh=3600)))
    for _ in range(5):
        assert http.get("/api/portal/runs").json()["historyState"] == "available"
    assert len(adx.queries) == 1


def test_a_refused_query_degrades_to_live_rows_with_a_one_line_diagnostic(adx) -> None:
    adx.query_status = 403
    live = copy.deepcopy(recorded("completed")["job"])
    body = client(portal(_config(), [live], _reader(adx))).get("/api/portal/runs").json()
    assert body["historyState"] == "history-unavailable"
    diagnostic = body["historyDiagnostic"]
    assert "HTTP 403" in diagnostic and "portal.kusto" in diagnostic and "\n" not in diagnostic
    assert [r["name"] for r in body["runs"]] == ["completed"]


def test_an_unreachable_endpoint_is_history_unavailable_not_a_failed_board() -> None:
    reader = KustoHistoryReader("http://127.0.0.1:9", "Metrics", "ws", 10, token=lambda: "t")
    response = client(portal(_config(), [], reader)).get("/api/portal/runs")
    assert response.status_code == 200
    assert response.json()["historyState"] == "history-unavailable"
    assert "network path" in response.json()["historyDiagnostic"]


@pytest.mark.parametrize(
    ("fields", "names"),
    [
        ({"kusto_endpoint": ""}, "--kusto-endpoint"),
        ({"run_history_enabled": False}, "--run-history-enabled"),
        ({"source": "local"}, "--source kusto"),
    ],
)
def test_a_kusto_source_needs_an_endpoint_and_run_history(fields, names) -> None:
    with pytest.raises(UsageError) as refused:
        _config(**fields)
    assert names in refused.value.one_line() and "platform operator" in refused.value.one_line()


def test_a_history_table_that_is_not_a_kusto_name_is_refused() -> None:
    with pytest.raises(UsageError) as refused:
        history_query("T | take 1")
    assert "portal.kusto.table" in refused.value.one_line()

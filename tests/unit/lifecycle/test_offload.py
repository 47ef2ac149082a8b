"""`tau logs` once the head pod is gone: the driver output read back from the central log
offload, over HTTPS from a local stand-in of ADX's query endpoint (kusto_standin.py), with
tokens from the real azure-identity signing in against a stand-in of Entra ID."""

from __future__ import annotations

import pytest

from tau import keys
from tau.errors import RuntimeFailure, UsageError
from tau.kube import KubeClient
from tau.lifecycle.logs import LogOptions, streams
from tau.lifecycle.offload import (
    LogOffload,
    OffloadRead,
    azure_token,
    check_endpoint,
    connection,
    flag_connection,
    offloaded_lines,
    published_connection,
)
from tests.unit.connection.conftest import AzureStandIn, azure
from tests.unit.scripted_api import scripted_api

from .kusto_standin import KustoStandIn, kusto

__all__ = ["azure", "kusto"]

NS = "research"
HEAD = "tune-smoke-raycluster-abcde-head-x7k2p"


def _offload(stand_in: KustoStandIn) -> LogOffload:
    return LogOffload("aks-eus-1", stand_in.url, "Logs")


def _read(**changes) -> OffloadRead:
    fields = {
        "namespace": NS,
        "pod_prefix": "tune-smoke-raycluster-abcde-head",
        "container": keys.DRIVER_LOG_CONTAINER,
        "tail": 200,
        "timestamps": False,
    }
    return OffloadRead(**(fields | changes))


def _table(stand_in: KustoStandIn) -> None:
    for second, text in enumerate(["trial 1 loss=0.9", "trial 2 loss=0.5", "best: lr=0.01"]):
        stand_in.line(f"2026-01-01T00:00:0{second}Z", text, pod=HEAD)
    stand_in.line("2026-01-01T00:00:01Z", "ray-head noise", pod=HEAD, container="ray-head")
    stand_in.line("2026-01-01T00:00:01Z", "a worker", pod="tune-smoke-raycluster-abcde-w-1")
    stand_in.line("2026-01-01T00:00:01Z", "other ns", pod=HEAD, namespace="elsewhere")
    stand_in.line("2026-01-01T00:00:01Z", "other cluster", pod=HEAD, cluster="aks-weu-2")


def _lines(stand_in: KustoStandIn, read: OffloadRead) -> list[tuple[str, str]]:
    return list(offloaded_lines(_offload(stand_in), read, lambda: stand_in.token))


def test_the_head_pod_s_driver_log_is_read_back_oldest_first(kusto) -> None:
    _table(kusto)
    lines = _lines(kusto, _read())
    assert [line for _, line in lines] == ["trial 1 loss=0.9", "trial 2 loss=0.5", "best: lr=0.01"]
    assert {label for label, _ in lines} == {f"[pod/{HEAD}/driver-log] "}
    [query] = kusto.queries
    assert query["db"] == "Logs" and query["authorization"] == f"Bearer {kusto.token}"
    assert query["properties"]["Parameters"]["tau_cluster"] == "aks-eus-1"


def test_tail_keeps_the_last_lines_and_timestamps_prefix_them(kusto) -> None:
    _table(kusto)
    lines = _lines(kusto, _read(tail=2, timestamps=True))
    assert [line for _, line in lines] == [
        "2026-01-01T00:00:01Z trial 2 loss=0.5",
        "2026-01-01T00:00:02Z best: lr=0.01",
    ]
    assert "| top" not in _query_text(kusto, tail=-1), "--tail -1 reads every line"


def _query_text(stand_in: KustoStandIn, tail: int) -> str:
    _lines(stand_in, _read(tail=tail))
    return str(stand_in.queries[-1]["csl"])


def test_all_containers_reads_every_container_of_the_head(kusto) -> None:
    _table(kusto)
    labels = [label for label, _ in _lines(kusto, _read(container=""))]
    assert f"[pod/{HEAD}/ray-head] " in labels and len(labels) == 4


def test_values_travel_as_query_parameters_never_in_the_query_text(kusto) -> None:
    hostile = 'research" or 1==1 | take 1'
    assert _lines(kusto, _read(namespace=hostile)) == []
    [query] = kusto.queries
    assert query["properties"]["Parameters"]["tau_namespace"] == hostile
    assert "1==1" not in query["csl"] and keys.LOG_OFFLOAD_TABLE in query["csl"]


def test_a_token_from_azure_identity_signs_the_query_and_is_never_printed(
    kusto, azure: AzureStandIn, capsys
) -> None:
    _table(kusto)
    kusto.token = AzureStandIn.ACCESS_TOKEN
    lines = list(offloaded_lines(_offload(kusto), _read(), azure_token(kusto.url)))
    assert len(lines) == 3
    assert kusto.queries[0]["authorization"] == f"Bearer {AzureStandIn.ACCESS_TOKEN}"
    printed = capsys.readouterr()
    assert AzureStandIn.ACCESS_TOKEN not in printed.out + printed.err


def test_a_failed_sign_in_is_one_line_naming_the_sign_in(kusto, azure: AzureStandIn) -> None:
    azure.token_status = 401
    with pytest.raises(RuntimeFailure) as raised:
        list(offloaded_lines(_offload(kusto), _read(), azure_token(kusto.url)))
    assert raised.value.owner == "researcher: Azure sign-in"
    assert AzureStandIn.CLIENT_SECRET not in raised.value.one_line()
    assert kusto.queries == [], "no query without a token"


def test_a_refused_query_says_which_role_is_missing_without_the_token(kusto) -> None:
    kusto.status = 403
    with pytest.raises(RuntimeFailure) as raised:
        _lines(kusto, _read())
    line = raised.value.one_line()
    assert "HTTP 403" in line and "Viewer role" in line and "\n" not in line
    assert kusto.token not in line


def test_an_error_inside_the_result_is_a_failure_not_partial_output(kusto) -> None:
    _table(kusto)
    kusto.query_error = "Query result set has exceeded the internal record count limit"
    with pytest.raises(RuntimeFailure, match="exceeded the internal record count limit"):
        _lines(kusto, _read())


def test_an_unreachable_endpoint_names_the_flag() -> None:
    where = LogOffload("aks-eus-1", "https://127.0.0.1:9", "Logs")
    with pytest.raises(RuntimeFailure) as raised:
        list(offloaded_lines(where, _read(), lambda: "t"))
    assert raised.value.owner == "researcher: --kusto-endpoint"


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://logs.eastus.kusto.windows.net",
        "https://logs.eastus.kusto.windows.net/v2/rest/query",
        "https://logs.eastus.kusto.windows.net?db=Logs",
        "https://user:pass@logs.eastus.kusto.windows.net",
        "https://",
        "logs.eastus.kusto.windows.net",
    ],
)
def test_an_endpoint_that_is_not_a_bare_https_origin_is_refused(endpoint) -> None:
    with pytest.raises(UsageError) as raised:
        flag_connection(LogOffload(endpoint=endpoint))
    assert raised.value.owner == "researcher: --kusto-endpoint"
    assert "pass" not in raised.value.one_line(), "credentials in a URL are never echoed"


def test_an_endpoint_keeps_its_host_and_port() -> None:
    assert check_endpoint("https://logs.kusto.windows.net/", "x", "o") == (
        "https://logs.kusto.windows.net"
    )
    assert check_endpoint("https://127.0.0.1:8443", "x", "o") == "https://127.0.0.1:8443"


def _configmap(**data) -> dict:
    import json

    body = {"schema": keys.LOG_CONNECTION_SCHEMA} | data
    return {"data": {keys.LOG_CONNECTION_KEY: json.dumps(body)}}


PUBLISHED = {"endpoint": "https://logs.kusto.windows.net", "database": "Logs", "cluster": "aks-1"}


def test_the_published_connection_fills_what_the_flags_leave_out() -> None:
    published = published_connection(_configmap(**PUBLISHED), NS)
    assert published == LogOffload("aks-1", "https://logs.kusto.windows.net", "Logs")
    chosen = connection(LogOffload(cluster="aks-2"), published, NS)
    assert chosen == LogOffload("aks-2", "https://logs.kusto.windows.net", "Logs")
    assert published_connection(None, NS) == LogOffload()


@pytest.mark.parametrize(
    ("configmap", "message"),
    [
        ({"data": {}}, "has no JSON object under key connection.json"),
        ({"data": {keys.LOG_CONNECTION_KEY: "{not json"}}, "has no JSON object"),
        (_configmap(**PUBLISHED) | {"data": {"connection.json": '{"schema": "v0"}'}}, "schema"),
        (_configmap(**(PUBLISHED | {"cluster": ""})), "cluster must be non-empty"),
        (_configmap(**(PUBLISHED | {"endpoint": "http://logs"})), "must be an https ADX"),
    ],
)
def test_a_malformed_published_connection_names_the_configmap(configmap, message) -> None:
    with pytest.raises(RuntimeFailure) as raised:
        published_connection(configmap, NS)
    line = raised.value.one_line()
    assert message in line and f"ConfigMap {NS}/tau-log-connection" in line
    assert raised.value.owner == "platform operator (ConfigMap tau-log-connection)"


def test_an_incomplete_connection_names_every_missing_flag() -> None:
    with pytest.raises(UsageError) as raised:
        connection(LogOffload(endpoint="https://logs.kusto.windows.net"), LogOffload(), NS)
    line = raised.value.one_line()
    assert "--kusto-cluster, --kusto-database" in line and "tau-log-connection" in line
    assert "chart values tau-core-controller.logOffload.kusto" in line  # where it is published


def test_a_removed_rayjob_is_read_from_the_offload_after_a_note_to_the_caller(
    kusto, tmp_path
) -> None:
    """The note naming the offload goes to the caller's `note` (the CLI prints it on
    stderr) before the first line; tau.lifecycle prints nothing itself."""
    _table(kusto)
    opts = LogOptions(offload=_offload(kusto))
    said: list[str] = []
    with scripted_api(tmp_path) as (_, kubeconfig):  # every GET: 404, the RayJob is gone
        kube = KubeClient(kubeconfig, "stand-in")
        [(label, read)] = streams(
            kube, NS, "tune-smoke", opts, note=said.append, token=lambda _: lambda: kusto.token
        )
        assert said == [], "nothing is said before the lines are read"
        lines = [*read()]
    assert label == "" and lines[0] == "trial 1 loss=0.9" and lines[-1] == "best: lr=0.01"
    assert said == [
        f"note: the head pod of {NS}/tune-smoke is gone; reading the central log offload "
        f"(ADX {kusto.url} database Logs, cluster aks-eus-1)"
    ]

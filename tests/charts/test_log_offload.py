"""The platform's log offload connection: chart values → controller flags → the workspace
ConfigMap `tau logs` reads.

The chart renders no ConfigMap itself (workspace namespaces come and go after the install);
it hands the connection to the controller, which writes it into every workspace namespace. So
these tests render the real chart, parse the rendered arguments with the controller's own
parser, and read the ConfigMap the controller would write back with the reader `tau logs` uses.
"""

from __future__ import annotations

import json

import pytest

from tau import keys
from tau.controller.__main__ import parse
from tau.controller.workspace import desired_log_connection
from tau.lifecycle.offload import LogOffload, published_connection

from .conftest import RenderError

ENDPOINT = "https://taugridlogs.westeurope.kusto.windows.net"
KUSTO = "tau-core-controller.logOffload.kusto"


def _controller_args(objects) -> list[str]:
    [deployment] = [
        o
        for o in objects
        if o["kind"] == "Deployment" and o["metadata"]["name"] == "tau-core-controller"
    ]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return container["args"]


def test_declared_log_offload_reaches_every_workspace_as_the_connection_tau_logs_reads(render):
    objects = render(f"{KUSTO}.endpoint={ENDPOINT}", f"{KUSTO}.cluster=aks-weu-1")
    args = _controller_args(objects)
    assert [a for a in args if a.startswith("--log-offload-")] == [
        f"--log-offload-endpoint={ENDPOINT}",
        "--log-offload-database=Logs",  # the chart's default: the platform's Logs database
        "--log-offload-cluster=aks-weu-1",
    ]
    options = parse(args)
    assert options.log_offload == LogOffload("aks-weu-1", ENDPOINT, "Logs")

    configmap = desired_log_connection("team-a", "team-a-ns", options.log_offload)
    assert configmap["metadata"]["name"] == keys.LOG_CONNECTION_CONFIGMAP == "tau-log-connection"
    assert configmap["metadata"]["namespace"] == "team-a-ns"
    assert list(configmap["data"]) == [keys.LOG_CONNECTION_KEY] == ["connection.json"]
    assert json.loads(configmap["data"][keys.LOG_CONNECTION_KEY]) == {
        "schema": keys.LOG_CONNECTION_SCHEMA,
        "endpoint": ENDPOINT,
        "database": "Logs",
        "cluster": "aks-weu-1",
    }
    assert published_connection(configmap, "team-a-ns") == options.log_offload


def test_without_an_endpoint_the_controller_publishes_nothing(render):
    args = _controller_args(render())
    assert not [a for a in args if a.startswith("--log-offload-")]
    assert parse(args).log_offload is None


def test_the_controller_may_write_the_configmaps_it_publishes(render):
    [role] = [
        o
        for o in render()
        if o["kind"] == "ClusterRole" and o["metadata"]["name"] == "tau-core-controller"
    ]
    [rule] = [r for r in role["rules"] if "configmaps" in r["resources"]]
    assert rule["apiGroups"] == [""] and rule["resources"] == ["configmaps"]
    assert {"get", "list", "watch", "create", "patch", "delete"} <= set(rule["verbs"])


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://taugridlogs.westeurope.kusto.windows.net",  # the token would travel in clear
        f"{ENDPOINT}/v2/rest/query",
        f"{ENDPOINT}?db=Logs",
        "https://user:secret@taugridlogs.westeurope.kusto.windows.net",
        "taugridlogs.westeurope.kusto.windows.net",
    ],
)
def test_the_schema_refuses_an_endpoint_that_is_not_a_bare_https_origin(render, endpoint):
    with pytest.raises(RenderError) as refused:
        render(f"{KUSTO}.endpoint={endpoint}", f"{KUSTO}.cluster=aks-weu-1")
    assert "logOffload/kusto/endpoint" in str(refused.value)


def test_an_https_origin_with_a_port_or_trailing_slash_is_accepted(render):
    for endpoint in (f"{ENDPOINT}/", "https://127.0.0.1:8443"):
        args = _controller_args(render(f"{KUSTO}.endpoint={endpoint}", f"{KUSTO}.cluster=c"))
        assert parse(args).log_offload.endpoint == endpoint.rstrip("/")


@pytest.mark.parametrize(
    ("sets", "key"),
    [
        ([f"{KUSTO}.endpoint={ENDPOINT}"], "logOffload/kusto/cluster"),  # rows of which cluster?
        ([f"{KUSTO}.cluster=aks-weu-1"], "logOffload/kusto/cluster"),  # changes nothing alone
        ([f"{KUSTO}.endpoint={ENDPOINT}", f"{KUSTO}.cluster=c", f"{KUSTO}.database="], "database"),
        ([f"{KUSTO}.endpoint={ENDPOINT}", f"{KUSTO}.cluster=c", f"{KUSTO}.table=X"], "kusto"),
    ],
)
def test_the_schema_refuses_a_partial_connection(render, sets, key):
    with pytest.raises(RenderError) as refused:
        render(*sets)
    assert key in str(refused.value)

"""The log connection the controller publishes: its flags and the ConfigMap it owns."""

from __future__ import annotations

import pytest

from tau import keys
from tau.controller.__main__ import parse
from tau.controller.workspace import desired_log_connection, owned_by
from tau.lifecycle.offload import LogOffload

ENDPOINT = "https://taugridlogs.westeurope.kusto.windows.net"


def test_the_three_flags_make_one_connection_with_the_endpoint_normalised():
    options = parse(
        [
            f"--log-offload-endpoint={ENDPOINT}/",
            "--log-offload-database=Logs",
            "--log-offload-cluster=aks-weu-1",
        ]
    )
    assert options.log_offload == LogOffload("aks-weu-1", ENDPOINT, "Logs")


def test_without_flags_nothing_is_published():
    assert parse([]).log_offload is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [f"--log-offload-endpoint={ENDPOINT}"],
            "--log-offload-database, --log-offload-cluster missing",
        ),
        (["--log-offload-cluster=aks-weu-1"], "--log-offload-endpoint, --log-offload-database"),
        (
            [
                "--log-offload-endpoint=http://taugridlogs.westeurope.kusto.windows.net",
                "--log-offload-database=Logs",
                "--log-offload-cluster=aks-weu-1",
            ],
            "--log-offload-endpoint must be an https ADX query endpoint",
        ),
    ],
)
def test_a_partial_or_unsafe_connection_stops_the_controller_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        parse(argv)
    assert stopped.value.code == 2
    [error] = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert message in error
    assert "(owner: platform operator (chart values tau-core-controller.logOffload.kusto))" in error


def test_the_connection_configmap_is_owned_by_the_workspace_it_is_published_for():
    configmap = desired_log_connection("team-a", "ml", LogOffload("c", ENDPOINT, "Logs"))
    assert configmap["metadata"]["name"] == keys.LOG_CONNECTION_CONFIGMAP
    assert owned_by(configmap, "team-a") and not owned_by(configmap, "team-b")

"""`tau logs` for a RayJob KubeRay already removed: the driver output comes back from the
central log offload, its ADX connection discovered from the workspace's ConfigMap
`tau-log-connection` on the local control plane — published by hand, and published by the
tau-core controller from the chart's `logOffload.kusto` values.

ADX and Entra ID cannot be reached from here: the query endpoint is the HTTPS stand-in of
tests/unit/lifecycle/kusto_standin.py and the sign-in is the real azure-identity against the
Entra stand-in of tests/unit/connection/conftest.py (a service principal in AZURE_* variables).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from controller_harness import Controller, chart_controller_args, install, unique, wait_for
from tau_cli import run_tau

from hack.localcluster import LocalCluster
from tau import keys
from tests.unit.connection.conftest import AzureStandIn, azure
from tests.unit.lifecycle.kusto_standin import KustoStandIn, kusto

__all__ = ["azure", "kusto"]

RUN = "tune-smoke"
HEAD = "tune-smoke-raycluster-x2k9q-head-7hs2d"


def _publish(cluster: LocalCluster, namespace: str, connection: dict | str) -> None:
    body = connection if isinstance(connection, str) else json.dumps(connection)
    cluster.kubectl(
        "create",
        "configmap",
        keys.LOG_CONNECTION_CONFIGMAP,
        "-n",
        namespace,
        f"--from-literal={keys.LOG_CONNECTION_KEY}={body}",
    )


def _logs(cluster: LocalCluster, namespace: str, tmp_path: Path, *flags: str):
    context = yaml.safe_load(cluster.kubeconfig.read_text())["current-context"]
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig)}
    env["TAU_CONFIG_DIR"] = str(tmp_path / "tau-config")
    env.pop("TAU_CONTEXT", None)
    args = ("logs", RUN, "--context", context, "-n", namespace, *flags)
    return run_tau(*args, cwd=tmp_path, env=env)


def _table(kusto: KustoStandIn, namespace: str) -> None:
    kusto.token = AzureStandIn.ACCESS_TOKEN
    for second, text in enumerate(["Number of trials: 6", "Best config: {'lr': 0.01}"]):
        kusto.line(f"2026-01-01T00:00:0{second}Z", text, pod=HEAD, namespace=namespace)
    kusto.line("2026-01-01T00:00:05Z", "elsewhere", pod=HEAD, namespace=namespace, cluster="b")


def test_a_removed_rayjob_s_driver_output_is_read_from_the_published_offload(
    local_cluster: LocalCluster, namespace: str, kusto, azure, tmp_path
) -> None:
    _table(kusto, namespace)
    published = {
        "schema": keys.LOG_CONNECTION_SCHEMA,
        "endpoint": kusto.url,
        "database": "Logs",
        "cluster": "aks-eus-1",
    }
    _publish(local_cluster, namespace, published)

    done = _logs(local_cluster, namespace, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Number of trials: 6", "Best config: {'lr': 0.01}"]
    assert "reading the central log offload" in done.stderr and kusto.url in done.stderr
    [query] = kusto.queries
    assert query["properties"]["Parameters"]["tau_pod_prefix"] == f"{RUN}-"
    assert query["properties"]["Parameters"]["tau_namespace"] == namespace
    for secret in (AzureStandIn.ACCESS_TOKEN, AzureStandIn.CLIENT_SECRET):
        assert secret not in done.stdout + done.stderr

    flagged = _logs(local_cluster, namespace, tmp_path, "--kusto-cluster", "b", "--prefix")
    assert flagged.returncode == 0, flagged.stderr
    assert flagged.stdout.splitlines() == [f"[pod/{HEAD}/driver-log] elsewhere"]

    follow = _logs(local_cluster, namespace, tmp_path, "-f")
    assert follow.returncode == 2 and "-f/--follow does not apply" in follow.stderr


def test_without_a_published_connection_the_missing_run_says_how_to_reach_the_offload(
    local_cluster: LocalCluster, namespace: str, tmp_path
) -> None:
    done = _logs(local_cluster, namespace, tmp_path)
    assert done.returncode == 1
    assert f'no Job or RayJob "{RUN}"' in done.stderr and "--kusto-cluster" in done.stderr
    partial = _logs(local_cluster, namespace, tmp_path, "--kusto-cluster", "aks-eus-1")
    assert partial.returncode == 2
    assert "needs --kusto-endpoint, --kusto-database" in partial.stderr


def test_a_malformed_published_connection_is_one_line_naming_the_configmap(
    local_cluster: LocalCluster, namespace: str, tmp_path
) -> None:
    _publish(local_cluster, namespace, "{not json")
    done = _logs(local_cluster, namespace, tmp_path)
    assert done.returncode == 1 and done.stderr.count("error: ") == 1
    assert f"ConfigMap {namespace}/{keys.LOG_CONNECTION_CONFIGMAP}" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_controller_publishes_the_charts_log_offload_where_tau_logs_finds_it(
    local_cluster: LocalCluster, namespace: str, kusto, azure, tmp_path
) -> None:
    """Chart values → the controller's flags → ConfigMap in the workspace namespace → `tau logs`
    with no --kusto-* flags, as the controller's own ServiceAccount RBAC allows."""
    _table(kusto, namespace)
    system = unique("tau-sys")
    install(local_cluster, system)
    kusto_values = "logOffload.kusto"
    args = chart_controller_args(
        f"{kusto_values}.endpoint={kusto.url}", f"{kusto_values}.cluster=aks-eus-1"
    )
    (tmp_path / "controller").mkdir()
    controller = Controller(local_cluster, system, tmp_path / "controller", tuple(args))
    controller.start()
    workspace = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauWorkspace",
        "metadata": {"name": "logs", "namespace": system},
        "spec": {
            "authorization": {"mode": "cluster-wide"},
            "queue": "jobqueue",
            "target": {"namespace": namespace},
        },
    }
    try:
        local_cluster.kubectl("apply", "-f", "-", input=json.dumps(workspace))

        def published() -> bool:
            done = local_cluster.kubectl(
                "get", "configmap", keys.LOG_CONNECTION_CONFIGMAP, "-n", namespace, check=False
            )
            return done.returncode == 0

        wait_for(f"ConfigMap {keys.LOG_CONNECTION_CONFIGMAP} (log: {controller.log})", published)
        done = _logs(local_cluster, namespace, tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["Number of trials: 6", "Best config: {'lr': 0.01}"]
        assert kusto.url in done.stderr
        [query] = kusto.queries
        assert query["db"] == "Logs"
        assert query["properties"]["Parameters"]["tau_cluster"] == "aks-eus-1"

        # Deleted by mistake: the controller watches what it owns and puts it back.
        local_cluster.kubectl("delete", "configmap", keys.LOG_CONNECTION_CONFIGMAP, "-n", namespace)
        wait_for("the deleted ConfigMap restored", published, timeout=15)
    finally:
        local_cluster.kubectl(
            "delete", "workspaces.tau.azure.com", "logs", "-n", system, "--timeout=60s",
            check=False,
        )  # fmt: skip
        controller.stop()

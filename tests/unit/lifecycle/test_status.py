"""The RunStatus document, its next actions and the kubectl escape hatches."""

from __future__ import annotations

import io
import json

from rich.console import Console

from tau.cli.status_view import render
from tau.connection import Target
from tau.lifecycle import status as st

TARGET = Target("/home/r/.config/tau/kubeconfigs/research.yaml", "research'admin", "research")


def test_the_document_is_json_with_stable_keys_and_non_null_arrays(snapshot):
    doc = st.document(snapshot("over-quota"), TARGET)
    json.dumps(doc)
    assert (doc["apiVersion"], doc["kind"]) == ("tau.azure.com/v1alpha1", "RunStatus")
    for key in ("phases", "workloads", "pods", "resourceClaims", "events", "diagnostics"):
        assert isinstance(doc[key], list)
    assert doc["status"]["state"] == "queued"
    codes = [d["code"] for d in doc["diagnostics"]]
    assert "KUEUE_PENDING" in codes and "STARTUP_KUEUE_ADMISSION" in codes
    assert [a["name"] for a in doc["actions"]] == ["watch"]


def test_copied_commands_carry_the_route_and_a_single_path_kubeconfig(snapshot):
    doc = st.document(snapshot("failed-unknown"), TARGET)
    logs, diagnostics = doc["actions"]
    assert logs["command"]["argv"] == [
        "tau", "run", "logs", "failed-unknown", "--tail", "200",
        "--context", "research'admin", "--namespace", "research",
    ]  # fmt: skip
    assert logs["command"]["env"] == {"KUBECONFIG": TARGET.kubeconfig}
    assert logs["command"]["shell"].startswith(f"KUBECONFIG='{TARGET.kubeconfig}' tau run logs")
    assert diagnostics["command"]["argv"][3:5] == ["failed-unknown", "--diagnostic-hints"]
    assert doc["diagnostics"][0]["code"] == "RUN_FAILED"


def test_through_a_workspace_connection_commands_route_by_workspace_without_kubeconfig(snapshot):
    connected = Target(TARGET.kubeconfig, "research-cluster", "research", "ml", "connection")
    doc = st.document(snapshot("failed-unknown"), connected)
    logs = doc["actions"][0]["command"]
    assert logs["argv"][-4:] == ["--workspace", "ml", "--namespace", "research"]
    assert logs["env"] == {}
    assert logs["shell"].startswith("tau run logs failed-unknown")
    # kubectl knows no workspace connection: its escape hatches still name the kubeconfig.
    hints = st.diagnostic_hints(snapshot("failed-unknown"), connected)
    assert f"'--kubeconfig' '{TARGET.kubeconfig}'" in hints[0]


def test_hints_quote_every_argument_and_prefer_the_current_failure(snapshot):
    snap = snapshot("failed-unknown")
    lines = st.diagnostic_hints(snap, TARGET)
    pod = snap.pods[0]["metadata"]["name"]
    base = (
        "'kubectl' '--context' 'research'\"'\"'admin' "
        f"'--kubeconfig' '{TARGET.kubeconfig}' '-n' 'research'"
    )
    assert lines[0] == f"{base} 'top' 'pod' '{pod}' '--containers'"
    assert lines[1] == f"{base} 'logs' '{pod}' '-c' 'main' '--timestamps=true'"
    assert not any("'exec'" in line for line in lines)  # nothing is running


def test_hints_without_pods_use_the_job_selector(snapshot):
    lines = st.diagnostic_hints(snapshot("over-quota"), Target(None, "", "research"))
    assert lines == [
        "'kubectl' '-n' 'research' 'top' 'pod' '-l' 'job-name=over-quota' '--containers'",
        "'kubectl' '-n' 'research' 'logs' '-l' 'job-name=over-quota' '--all-containers=true' "
        "'--prefix=true' '--timestamps=true'",
    ]


def test_a_running_pod_gets_an_exec_hint(snapshot):
    snap = snapshot("running")
    pod = snap.pods[0]["metadata"]["name"]
    lines = st.diagnostic_hints(snap, Target(None, "", "research"))
    assert lines[-1] == f"'kubectl' '-n' 'research' 'exec' '-it' '{pod}' '-c' 'main' '--' '/bin/sh'"


def test_the_human_layout_has_every_section(snapshot):
    out = io.StringIO()
    render(st.document(snapshot("over-quota"), TARGET), Console(file=out, width=200))
    text = out.getvalue()
    for heading in ("Job research/over-quota", "State: Pending", "Progress", "Resources",
                    "Attention", "Next"):  # fmt: skip
        assert heading in text
    assert "[>]  Kueue admission" in text
    assert "Owner: platform/queue owner" in text


def test_a_waiting_run_shows_where_kueue_ranks_it(snapshot):
    snap = snapshot("over-quota")
    # As Kueue's visibility API lists it under localqueues/jobqueue/pendingworkloads.
    snap.positions["job-over-quota-d543e"] = {
        "metadata": {"name": "job-over-quota-d543e", "namespace": "research"},
        "localQueueName": "jobqueue",
        "positionInClusterQueue": 3,
        "positionInLocalQueue": 1,
        "priority": 100,
    }
    doc = st.document(snap, TARGET)
    (workload,) = doc["workloads"]
    assert workload["queuePosition"] == {
        "localQueue": "jobqueue",
        "inLocalQueue": 1,
        "inClusterQueue": 3,
        "priority": 100,
        "source": "kueue-visibility",
    }
    out = io.StringIO()
    render(doc, Console(file=out, width=200))
    assert (
        "Queue: job-over-quota-d543e is 2nd in LocalQueue jobqueue (4th in its ClusterQueue);"
        " 1 workload ahead of it"
    ) in out.getvalue()


def test_without_the_visibility_api_a_waiting_run_has_no_position(snapshot):
    (workload,) = st.document(snapshot("over-quota"), TARGET)["workloads"]
    assert workload["queuePosition"] is None


def test_a_pending_run_points_at_the_quota_view_of_its_own_workspace(snapshot):
    """Through a connection `tau workspace quota show WS` finds the workspace by name."""
    connected = Target(TARGET.kubeconfig, "research-cluster", "research", "ml", "connection", "sys")
    [pending] = [
        d for d in st.document(snapshot("over-quota"), connected)["diagnostics"]
        if d["code"] == "KUEUE_PENDING"
    ]  # fmt: skip
    assert pending["commands"][0]["argv"] == ["tau", "workspace", "quota", "show", "ml"]
    assert "`tau workspace quota show ml`" in pending["suggestion"]
    assert "platform operator" in pending["suggestion"]


def test_over_a_plain_kubeconfig_the_quota_command_names_context_and_system_namespace():
    plain = Target(TARGET.kubeconfig, "admin", "research", "ml", "kubeconfig", "tau-sys")
    command = st.quota_command(plain)
    assert command["argv"] == [
        "tau", "workspace", "quota", "show", "ml", "--context", "admin",
        "--system-namespace", "tau-sys",
    ]  # fmt: skip
    assert command["env"] == {"KUBECONFIG": TARGET.kubeconfig}
    assert st.quota_command(TARGET) is None  # no workspace known: no command to guess

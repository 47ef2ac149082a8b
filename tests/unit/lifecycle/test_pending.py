"""A run waiting for Kueue: its shortfall per flavor, time waited, who is ahead, who decides."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from tau.cli.status_view import render
from tau.connection import Target
from tau.lifecycle import pending
from tau.lifecycle import status as st

CONNECTED = Target("/k/research.yaml", "research-cluster", "research", "ml", "connection", "sys")


def test_each_flavor_kueue_tried_is_one_row_with_what_is_missing(snapshot):
    [wl] = snapshot("over-quota").workloads
    [cond] = wl["status"]["conditions"]
    rows = pending.shortfalls(cond["message"])
    assert [(r["flavor"], r["requested"], r["capacity"], r["needed"]) for r in rows] == [
        ("taugrid-default-cpu", "64", "0", "64"),
        ("taugrid-gpu-a100-80gb", "64", "4", "60"),
        ("taugrid-gpu-h200-141gb", "64", "16", "48"),
    ]
    assert {r["resource"] for r in rows} == {"nvidia.com/gpu"}


def test_the_older_more_needed_sentence_keeps_its_amount():
    message = "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
    message += "flavor default-flavor, 8 more needed"
    [row] = pending.shortfalls(message)
    assert pending.describe(row) == "flavor default-flavor: cpu 8 more needed"


def test_memory_quantities_are_subtracted_in_their_unit():
    message = (
        "insufficient quota for memory in flavor cpu, previously considered podsets requests "
        "(2Gi) + current podset request (6Gi) > maximum capacity (4Gi)"
    )
    [row] = pending.shortfalls(message)
    assert (row["requested"], row["needed"]) == ("8Gi", "4Gi")


def test_time_waited_reads_like_a_duration():
    now = datetime(2026, 11, 29, 10, 14, 48, tzinfo=UTC)
    assert pending.waited("2026-11-29T10:09:43Z", now) == "5m5s"
    assert pending.waited("not a time", now) == ""


def test_the_pending_diagnostic_is_not_cut_before_the_shortfall_and_names_the_cluster_queue(
    snapshot,
):
    snap = snapshot("over-quota")
    snap.cluster_queues["jobqueue"] = "jobqueue"
    [waiting] = [
        d for d in st.document(snap, CONNECTED)["diagnostics"] if d["code"] == "KUEUE_PENDING"
    ]
    assert waiting["message"].startswith("Workload job-over-quota-d543e is not admitted (waiting ")
    assert (
        "flavor taugrid-gpu-h200-141gb: nvidia.com/gpu 64 requested, capacity 16, 48 more "
        in (waiting["message"])
    )
    assert (
        "the platform operator owns the queue's quota (ClusterQueue jobqueue)"
        in (waiting["suggestion"])
    )


def test_the_workloads_ahead_are_listed_by_name_and_priority(snapshot):
    snap = snapshot("over-quota")
    items = [
        {"metadata": {"name": "big-sweep"}, "positionInLocalQueue": 0, "priority": 1000},
        {"metadata": {"name": "job-over-quota-d543e"}, "positionInLocalQueue": 1, "priority": 100},
        {"metadata": {"name": "later"}, "positionInLocalQueue": 2, "priority": 100},
    ]
    snap.positions["job-over-quota-d543e"] = {**items[1], "localQueueName": "jobqueue"}
    snap.ahead["job-over-quota-d543e"] = pending.ahead_of(items, "job-over-quota-d543e")
    doc = st.document(snap, CONNECTED)
    [workload] = doc["workloads"]
    assert workload["waiting"]["ahead"] == [{"name": "big-sweep", "priority": 1000, "position": 0}]
    out = io.StringIO()
    render(doc, Console(file=out, width=200))
    assert "Ahead of job-over-quota-d543e: big-sweep (priority 1000)" in out.getvalue()


def test_an_admitted_workload_is_not_waiting(snapshot):
    [workload] = st.document(snapshot("completed"), CONNECTED)["workloads"]
    assert workload["waiting"] is None


def test_amounts_kueue_writes_in_different_units_are_compared_as_numbers():
    """As the local cluster's Kueue answers a 1000-CPU run on a 32-CPU flavor."""
    message = (
        "insufficient quota for cpu in flavor taugrid-default-cpu, previously considered podsets "
        "requests (0) + current podset request (1k) > maximum capacity (32)"
    )
    [row] = pending.shortfalls(message)
    assert pending.describe(row) == (
        "flavor taugrid-default-cpu: cpu 1k requested, capacity 32, 968 more needed"
    )

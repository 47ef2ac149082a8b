"""The Portal's boards over recorded cluster objects: what an operator and a researcher read."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path

from tau.connection import Target
from tau.evidence import init_experiment, lifecycle
from tau.lifecycle import status as lifecycle_status
from tau.lifecycle.snapshot import Snapshot
from tau.portal.web import nodes, queue, runs
from tau.portal.web.config import PortalConfig

from .web_helpers import client, portal, recorded, snapshot_objects

NS = "research"


def _job(name: str, **status) -> dict:
    job = copy.deepcopy(recorded("completed")["job"])
    job["metadata"].update(name=name, uid=f"uid-{name}", resourceVersion="7")
    job["status"] = status
    return job


def test_runs_board_shows_tau_jobs_with_status_queue_gpus_and_owner() -> None:
    over_quota = recorded("over-quota")["job"]
    over_quota["metadata"]["labels"]["tau.azure.com/team"] = "vision"
    completed = recorded("completed")["job"]
    external = _job("not-ours")
    external["metadata"]["labels"] = {}
    made = portal(PortalConfig(namespaces=(NS,)), [over_quota, completed, external])

    body = client(made).get("/api/portal/runs").json()

    by_name = {r["name"]: r for r in body["runs"]}
    assert set(by_name) == {"over-quota", "completed"}
    assert by_name["over-quota"]["status"] == "Suspended"
    assert by_name["over-quota"]["queue"] == "jobqueue"
    assert by_name["over-quota"]["gpus"] == 64
    assert by_name["over-quota"]["owner"] == "vision"
    assert by_name["completed"]["status"] == "Complete"
    assert by_name["completed"]["durableId"] == f"/{NS}/{completed['metadata']['uid']}"
    assert body["historyState"] == "live-only"
    assert body["scope"]["namespaces"] == [NS]
    assert body["state"] == "ready"


def test_runs_board_filters_by_search_text_and_state() -> None:
    made = portal(
        PortalConfig(namespaces=(NS,)),
        [recorded("over-quota")["job"], recorded("completed")["job"]],
    )
    http = client(made)
    assert [r["name"] for r in http.get("/api/portal/runs?q=over").json()["runs"]] == ["over-quota"]
    assert [r["name"] for r in http.get("/api/portal/runs?state=complete").json()["runs"]] == [
        "completed"
    ]
    assert http.get("/api/portal/runs?q=nothing-like-this").json()["state"] == "no_data"


def test_rows_are_rebuilt_only_when_the_resource_version_changes() -> None:
    memo = runs.RowMemo("c1")
    job = recorded("completed")["job"]
    first = memo.row(job, NS)
    assert memo.row(copy.deepcopy(job), NS) is first
    changed = copy.deepcopy(job)
    changed["metadata"]["resourceVersion"] = "999"
    changed["spec"]["suspend"] = False
    assert memo.row(changed, NS) is not first


def _history(store: Path, rows: list[dict]) -> None:
    lifecycle.append(store, rows)


def _lifecycle_row(name: str, state: str, at: str, **extra) -> dict:
    return {
        "observed_at": at,
        "observation_id": f"{name}-{state}-{at}",
        "durable_id": f"c1/{NS}/uid-{name}",
        "run_id": name,
        "workspace_id": "ws",
        "owning_resource_kind": "Job",
        "owning_resource_name": name,
        "namespace": NS,
        "cluster": "c1",
        "resource_uid": f"uid-{name}",
        "state": state,
        **extra,
    }


def test_history_keeps_a_deleted_run_visible_and_reports_available(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_experiment(store, "demo")
    _history(
        store,
        [
            _lifecycle_row("gone", "submitted", "2026-01-01T00:00:00Z"),
            _lifecycle_row("gone", "succeeded", "2026-01-01T00:05:00Z"),
            _lifecycle_row("other-ws", "running", "2026-01-01T00:05:00Z", workspace_id="x"),
        ],
    )
    live = recorded("completed")["job"]
    _history(
        store,
        [
            _lifecycle_row(
                "completed",
                "running",
                "2026-01-01T00:01:00Z",
                durable_id=f"/{NS}/{live['metadata']['uid']}",
                resource_uid=live["metadata"]["uid"],
            )
        ],
    )
    config = PortalConfig(
        namespaces=(NS,), workspace="ws", store=store, run_history_enabled=True, cluster=""
    )
    body = client(portal(config, [live])).get("/api/portal/runs?workspace=ws").json()

    assert body["historyState"] == "available"
    by_name = {r["name"]: r for r in body["runs"]}
    assert set(by_name) == {"completed", "gone"}, "other workspaces' history is not shown"
    assert by_name["gone"]["status"] == "Complete" and by_name["gone"]["historyOnly"]
    assert by_name["completed"]["source"] == "tau", "the live row wins over its history"


def test_a_failing_history_read_degrades_to_live_rows_with_a_diagnostic(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_experiment(store, "demo")
    lifecycle.path(store).write_bytes(b"this is not sqlite")
    config = PortalConfig(namespaces=(NS,), store=store, run_history_enabled=True)
    body = client(portal(config, [recorded("completed")["job"]])).get("/api/portal/runs").json()
    assert body["historyState"] == "history-unavailable"
    assert "lifecycle" in body["historyDiagnostic"]
    assert [r["name"] for r in body["runs"]] == ["completed"]


def test_lifecycle_history_treats_terminal_states_as_final(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_experiment(store, "demo")
    rows = [
        _lifecycle_row("r", "running", "2026-01-01T00:00:00Z"),
        _lifecycle_row("r", "failed", "2026-01-01T00:01:00Z"),
        _lifecycle_row("r", "running", "2026-01-01T00:02:00Z"),
    ]
    assert lifecycle.append(store, rows) == 3
    assert lifecycle.append(store, rows) == 0, "replayed observations are stored once"
    assert [r["state"] for r in lifecycle.latest(store, workspace_id="ws", limit=10)] == ["failed"]


def test_run_detail_is_the_tau_run_status_document_of_the_same_objects() -> None:
    made = portal(PortalConfig(namespaces=(NS,)), snapshot_objects("failed-unknown"))
    body = client(made).get(f"/api/portal/runs/{NS}/failed-unknown").json()

    expected = lifecycle_status.document(
        Snapshot.from_dict(recorded("failed-unknown")), Target(None, "", NS)
    )
    assert body["phases"] == expected["phases"]
    assert body["status"] == expected["status"]
    assert [e["reason"] for e in body["events"]] == [e["reason"] for e in expected["events"]]
    assert [p["name"] for p in body["pods"]] == [p["name"] for p in expected["pods"]]
    assert body["experiment"]["url"] == "/stellar?target=failed-unknown&workspace=default"


def test_run_detail_refuses_a_namespace_outside_the_scope_and_a_missing_run() -> None:
    http = client(portal(PortalConfig(namespaces=(NS,)), snapshot_objects("completed")))
    outside = http.get("/api/portal/runs/kube-system/anything")
    assert (
        outside.status_code == 404
        and "not in this Portal's workspace scope" in outside.json()["reason"]
    )
    missing = http.get(f"/api/portal/runs/{NS}/no-such-run")
    assert missing.status_code == 404 and "no Job or RayJob" in missing.json()["reason"]


def _queue_objects() -> list[dict]:
    cluster_queue = {
        "kind": "ClusterQueue",
        "metadata": {"name": "jobqueue"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "taugrid-gpu-h200-141gb",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 16}],
                        }
                    ],
                }
            ]
        },
        "status": {
            "flavorsReservation": [
                {
                    "name": "taugrid-gpu-h200-141gb",
                    "resources": [{"name": "nvidia.com/gpu", "total": "16"}],
                }
            ],
            "flavorsUsage": [
                {
                    "name": "taugrid-gpu-h200-141gb",
                    "resources": [{"name": "nvidia.com/gpu", "total": "16"}],
                }
            ],
            "pendingWorkloads": 2,
            "admittedWorkloads": 1,
            "conditions": [{"type": "Active", "status": "True"}],
        },
    }
    local_queue = {
        "kind": "LocalQueue",
        "metadata": {"name": "jobqueue", "namespace": NS},
        "spec": {"clusterQueue": "jobqueue"},
        "status": {"pendingWorkloads": 2, "admittedWorkloads": 1},
    }
    waiting = recorded("over-quota")["workloads"][0]
    urgent = copy.deepcopy(waiting)
    urgent["metadata"].update(name="urgent", creationTimestamp="2026-11-29T11:00:00Z")
    urgent["spec"]["priority"] = 1200
    admitted = copy.deepcopy(recorded("completed")["workloads"][0])
    admitted["status"]["conditions"] = [
        c for c in admitted["status"]["conditions"] if c["type"] != "Finished"
    ]
    return [cluster_queue, local_queue, waiting, urgent, admitted]


def test_jobs_board_shows_quota_per_flavor_and_each_pending_reason_and_position() -> None:
    config = PortalConfig(namespaces=(NS,), jobs_scope_mode="workspace")
    body = client(portal(config, _queue_objects())).get("/api/portal/jobs").json()

    [cq] = body["clusterQueues"]
    assert cq["flavors"] == [
        {
            "flavor": "taugrid-gpu-h200-141gb",
            "resource": "nvidia.com/gpu",
            "nominal": "16",
            "used": "16",
            "reserved": "16",
            "borrowingLimit": "",
            "full": True,
        }
    ]
    pending = {w["name"]: w for w in cq["pending"]}
    assert pending["urgent"]["positionInClusterQueue"] == 0, "higher priority goes first"
    assert pending["job-over-quota-d543e"]["positionInClusterQueue"] == 1
    assert {w["positionSource"] for w in cq["pending"]} == {"computed"}
    assert "insufficient quota for nvidia.com/gpu" in pending["urgent"]["reason"]
    assert [w["name"] for w in cq["admitted"]] == [
        recorded("completed")["workloads"][0]["metadata"]["name"]
    ]
    assert body["visibility"]["served"] is False


def test_kueue_visibility_positions_win_when_served() -> None:
    class Served(queue.Visibility):
        def __init__(self) -> None:
            super().__init__(None, list)  # type: ignore[arg-type]
            self.version, self.state = "v1beta2", "served"
            self.positions = {
                (NS, "job-over-quota-d543e"): {
                    "positionInClusterQueue": 7,
                    "positionInLocalQueue": 3,
                }
            }

    objects = _queue_objects()
    board = queue.board(
        [objects[0]], [objects[1]], [o for o in objects if o["kind"] == "Workload"], Served()
    )
    pending = {w["name"]: w for w in board["clusterQueues"][0]["pending"]}
    assert pending["job-over-quota-d543e"]["positionInClusterQueue"] == 7
    assert pending["job-over-quota-d543e"]["positionSource"] == "kueue-visibility"
    assert pending["urgent"]["positionSource"] == "computed"


def test_the_jobs_board_is_refused_until_a_scope_mode_is_chosen() -> None:
    response = client(portal(PortalConfig(namespaces=(NS,)), [])).get("/api/portal/jobs")
    assert response.status_code == 503
    assert "portal.jobs.scopeMode" in response.json()["reason"]


def test_nodes_board_lists_gpu_nodes_with_placement_labels_and_gpu_health() -> None:
    gpu = {
        "kind": "Node",
        "metadata": {
            "name": "kwok-h200-0",
            "labels": {"tau.azure.com/gpu-class": "h200-141gb", "kueue.azure.com/gpu-series": "x"},
        },
        "status": {
            "capacity": {"nvidia.com/gpu": "8"},
            "allocatable": {"nvidia.com/gpu": "8"},
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "GPUECCErrors", "status": "True", "reason": "GPUECCErrors"},
                {"type": "GPUMissing", "status": "False", "reason": "GPUMissingOk"},
            ],
        },
    }
    cpu = {"kind": "Node", "metadata": {"name": "kwok-cpu-0", "labels": {}}, "status": {}}
    body = client(portal(PortalConfig(namespaces=(NS,)), [gpu, cpu])).get("/api/portal/nodes")
    [row] = body.json()["nodes"]
    assert row["name"] == "kwok-h200-0" and row["gpuCapacity"] == 8
    assert row["placementLabels"]["tau.azure.com/gpu-class"] == "h200-141gb"
    health = {h["type"]: h["state"] for h in row["gpuHealth"]}
    assert health["GPUECCErrors"] == "problem"
    assert health["GPUMissing"] == "ok"
    assert health["NvidiaSmiProblem"] == "unknown", "never reported is not healthy"
    assert row["gpuProblems"] == ["GPUECCErrors"] and not row["gpuHealthy"]
    assert nodes.board([gpu, cpu], gpu_only=False)["total"] == 2


def _contents(store: Path) -> dict[Path, bytes]:
    """Every store file's bytes, but SQLite's own WAL/shared-memory files (readers touch
    those; they are not store content)."""
    return {
        p: p.read_bytes()
        for p in store.rglob("*")
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def test_reading_boards_never_writes_to_the_store(demo_store: Path) -> None:
    before = _contents(demo_store)
    with sqlite3.connect(demo_store / "index.sqlite") as db:
        summaries = db.execute("SELECT COUNT(*) FROM metric_summaries").fetchone()[0]
    config = PortalConfig(namespaces=(NS,), store=demo_store, run_history_enabled=True)
    http = client(portal(config, []))
    assert http.get("/api/portal/experiments").json()["total"] >= 1
    assert http.get("/api/stellar/snapshot?target=demo").status_code == 200
    assert http.get("/api/portal/runs").json()["historyState"] == "available"
    assert _contents(demo_store) == before
    with sqlite3.connect(demo_store / "index.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM metric_summaries").fetchone()[0] == summaries


def test_the_runs_index_is_rebuilt_only_when_a_watched_object_changes() -> None:
    objects = {NS: [recorded("completed")["job"]]}
    index = runs.RunsIndex("c1", None)
    first, _ = index.rows(objects.get, (NS,), generation=1)
    again, _ = index.rows(objects.get, (NS,), generation=1)
    assert again is first, "no watch event: the sorted list is reused"
    objects[NS].append(recorded("over-quota")["job"])
    changed, _ = index.rows(objects.get, (NS,), generation=2)
    assert [r["name"] for r in changed] == ["over-quota", "completed"]
    page = index.board(objects.get, (NS,), 2, limit=1, offset=1)
    assert page["total"] == 2 and [r["name"] for r in page["runs"]] == ["completed"]
    assert page["runs"][0]["age"].endswith(("s", "m", "h", "d"))


def test_run_detail_carries_the_failure_classification_tau_run_status_reports() -> None:
    made = portal(PortalConfig(namespaces=(NS,)), snapshot_objects("preempted"))
    body = client(made).get(f"/api/portal/runs/{NS}/preempted").json()
    assert body["failure"]["reason"] == "Preempted"
    assert body["failure"]["category"] == "preemption"
    assert body["failure"]["owner"] == "platform/queue owner"
    [failed] = [d for d in body["diagnostics"] if d["code"] == "RUN_FAILED"]
    assert "Preempted (preemption)" in failed["message"]

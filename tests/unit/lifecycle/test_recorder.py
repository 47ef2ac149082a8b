"""Lifecycle rows derived from recorded cluster objects, and the recorder's restart contract."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tau.errors import RuntimeFailure
from tau.evidence import init_experiment, lifecycle
from tau.kube import KubeClient
from tau.kube.informer import SYNCED
from tau.lifecycle import recorder as rec
from tau.lifecycle.recording import Recorder
from tau.portal.lifecycle_sinks import StoreSink

from .conftest import RECORDED

NS = "research"
SCOPE = rec.Scope("aks-1", NS)


def _snap(name: str) -> dict:
    import json

    data = json.loads((RECORDED / f"{name}.json").read_text())
    for obj in [data["job"], *data["workloads"], *data["pods"]]:
        if obj:
            obj["metadata"]["namespace"] = NS
    return data


def test_a_suspended_job_is_queued_with_kueue_s_reason() -> None:
    snap = _snap("over-quota")
    fields = rec.current("Job", snap["job"], snap["workloads"], [])
    assert fields["state"] == "queued"
    assert fields["reason"] == "Pending"


def test_a_completed_job_succeeds_with_the_condition_s_completion_time() -> None:
    snap = _snap("completed")
    fields = rec.current("Job", snap["job"], snap["workloads"], snap["pods"])
    assert fields["state"] == "succeeded"
    assert fields["completion_time"] == "2026-11-29T10:09:45Z"
    assert fields["kueue_admitted_time"] == "2026-11-29T10:09:43Z"
    assert fields["cluster_queue"] == "jobqueue"


def test_a_failed_job_carries_the_pod_derived_reason_and_a_bounded_message() -> None:
    snap = _snap("oomkilled")
    snap["job"]["status"]["conditions"][-1]["message"] = "x" * 2000
    fields = rec.current("Job", snap["job"], snap["workloads"], snap["pods"])
    assert fields["state"] == "failed"
    assert fields["reason"] == "BackoffLimitExceeded/OOMKilled"
    assert len(fields["message"].encode()) <= rec.MESSAGE_LIMIT


def test_deleting_a_running_job_cancels_it_but_a_finished_one_stays_finished() -> None:
    running = _snap("completed")["job"]
    running["status"] = {"active": 1}
    running["metadata"]["deletionTimestamp"] = "2026-11-29T11:00:00Z"
    fields = rec.current("Job", running, [], [])
    assert (fields["state"], fields["reason"]) == ("cancelled", "Deleting")
    done = _snap("completed")["job"]
    done["metadata"]["deletionTimestamp"] = "2026-11-29T11:00:00Z"
    assert rec.current("Job", done, [], [])["state"] == "succeeded"


def test_a_rayjob_admitted_by_kueue_is_admitted_with_its_admission_time() -> None:
    rayjob = {
        "kind": "RayJob",
        "metadata": {"name": "tune", "namespace": NS, "uid": "u-1"},
        "spec": {"suspend": False},
        "status": {"jobDeploymentStatus": "Initializing"},
    }
    workload = _snap("completed")["workloads"][0]
    fields = rec.current("RayJob", rayjob, [workload], [])
    assert fields["state"] == "admitted"
    assert fields["kueue_admitted_time"] == "2026-11-29T10:09:43Z"


def test_tracking_is_classified_from_labels_and_annotations() -> None:
    assert rec.tracking({}) == ("untracked", "")
    declared = {"labels": {"tau.azure.com/stellar-project": "p"}}
    assert rec.tracking(declared) == ("untracked", "declared-only")
    tracked = {"annotations": {"tau.azure.com/experiment-source": "stellar"}}
    assert rec.tracking(tracked) == ("tracked", "stellar")


def test_scope_defaults_derive_workspace_and_result_scope_from_the_namespace() -> None:
    base = rec.identity("Job", _snap("completed")["job"], SCOPE)
    assert base["workspace_id"] == NS and base["result_scope"] == NS
    assert base["durable_id"].startswith(f"aks-1/{NS}/")


def test_the_fingerprint_ignores_observation_time_and_resource_version() -> None:
    base = rec.identity("Job", _snap("completed")["job"], SCOPE)
    one = rec.receipt(base, "2026-01-01T00:00:00Z", "10")
    two = rec.receipt(base, "2026-01-02T00:00:00Z", "99")
    assert one["observation_id"] == two["observation_id"]


# -- the recorder over a filled cache and the real store sink ------------------------------


def _recorder(store: Path, objects: list[dict]) -> Recorder:
    made = Recorder(KubeClient("/nonexistent/kubeconfig"), SCOPE, [StoreSink(store)])
    for informer in made.cache.informers.values():
        informer.state = SYNCED
        informer.synced.set()
    _fill(made, objects)
    return made


def _fill(made: Recorder, objects: list[dict]) -> None:
    for informer in made.cache.informers.values():
        informer.items = {
            o["metadata"]["name"]: copy.deepcopy(o)
            for o in objects
            if o["kind"] == informer.resource.kind
        }


def _tau(job: dict) -> dict:
    job["metadata"].setdefault("labels", {})["tau.azure.com/managed-by"] = "tau"
    return job


def test_each_transition_is_written_once_across_a_recorder_restart(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_experiment(store, "demo")
    queued = _snap("over-quota")
    job = _tau(queued["job"])
    first = _recorder(store, [job, *queued["workloads"]])
    first.seed()
    assert [r["state"] for r in first.observe()] == ["submitted", "queued"]
    assert first.observe() == [], "a relist without change emits nothing"
    assert first.flush()

    restarted = _recorder(store, [job, *queued["workloads"]])
    restarted.seed()
    assert restarted.observe() == [], "the restarted recorder does not repeat transitions"

    done = _tau(_snap("completed")["job"])
    done["metadata"].update(name=job["metadata"]["name"], uid=job["metadata"]["uid"])
    _fill(restarted, [done])
    assert [r["state"] for r in restarted.observe()] == ["succeeded"]
    assert restarted.flush()
    _fill(restarted, [])
    assert restarted.observe() == [], "a finished run that disappears stays succeeded"

    states = [r["state"] for r in lifecycle.rows(store)]
    assert states == ["submitted", "queued", "succeeded"]


def test_a_run_deleted_before_it_finished_is_recorded_cancelled(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_experiment(store, "demo")
    queued = _snap("over-quota")
    made = _recorder(store, [_tau(queued["job"])])
    made.seed()
    made.observe()
    _fill(made, [])
    [gone] = made.observe()
    assert (gone["state"], gone["reason"]) == ("cancelled", "Deleting")


def test_a_failed_write_keeps_the_rows_for_the_next_pass(tmp_path: Path) -> None:
    missing = tmp_path / "no-store-yet"
    made = _recorder(missing, [_tau(_snap("over-quota")["job"])])
    made.seed()
    made.observe()
    assert not made.flush() and len(made.pending) == 2
    assert "does not exist" in made.last_error
    init_experiment(missing, "demo")
    assert made.flush() and not made.pending
    assert len(lifecycle.rows(missing)) == 2


def test_jobs_owned_by_a_rayjob_and_untagged_jobs_are_not_runs(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_experiment(store, "demo")
    child = _tau(_snap("completed")["job"])
    child["metadata"]["ownerReferences"] = [{"kind": "RayJob", "name": "r"}]
    external = _snap("over-quota")["job"]
    external["metadata"]["labels"] = {}
    made = _recorder(store, [child, external])
    made.seed()
    assert made.observe() == []
    assert {i.resource.kind for i in made.cache.informers.values()} == {
        "Job",
        "RayJob",
        "Workload",
    }


def test_health_is_alive_and_readiness_waits_for_pending_rows(tmp_path: Path) -> None:
    import json
    import urllib.error
    import urllib.request

    from tau.lifecycle.recording import serve_health

    made = _recorder(tmp_path / "missing-store", [_tau(_snap("over-quota")["job"])])
    server = serve_health(made, "127.0.0.1:0")
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with urllib.request.urlopen(f"{base}/healthz") as answer:
            assert json.loads(answer.read()) == {"status": "ok"}
        with urllib.request.urlopen(f"{base}/readyz") as answer:
            assert json.loads(answer.read())["ready"] is True
        made.observe()
        made.flush()
        with pytest.raises(urllib.error.HTTPError) as waiting:
            urllib.request.urlopen(f"{base}/readyz")
        body = json.loads(waiting.value.read())
        assert waiting.value.code == 503 and body["pending"] == 2
        assert "does not exist" in body["lastError"]
    finally:
        server.shutdown()


def test_a_reader_racing_the_first_append_sees_no_rows_not_a_damaged_store(
    tmp_path: Path,
) -> None:
    # sqlite creates the file on connect; the tables follow in the writer's transaction.
    import sqlite3

    sqlite3.connect(lifecycle.path(tmp_path)).close()
    assert lifecycle.path(tmp_path).is_file()
    assert lifecycle.rows(tmp_path) == []


def test_a_lifecycle_file_of_another_schema_is_refused(tmp_path: Path) -> None:
    import sqlite3

    with sqlite3.connect(lifecycle.path(tmp_path)) as db:
        db.execute("CREATE TABLE unrelated (x)")
    with pytest.raises(RuntimeFailure, match="has lifecycle schema 'none', expected"):
        lifecycle.rows(tmp_path)

"""Retry (`resilience.*`) and resume against the local control plane.

KWOK decides each pod's fate from the `kwok.tau.azure.com/outcome` pod annotation. A run
config cannot set pod annotations, so each test holds the workspace LocalQueue, lets `tau
run` create the (suspended) Job, stamps the outcome onto that first attempt's pod template
as the platform admin, and releases the queue. Retries are fresh Jobs without the stamp and
succeed — exactly "transient failure, same config succeeds on resubmission".
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_harness import wait_for
from lifecycle_env import Workspace, job_target, results_volume, workspace_setup

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx
from tau.cli.documents import RunHistory

FAST = {"backoff_initial": "1s", "backoff_max": "2s"}


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    yield from workspace_setup(local_cluster, tmp_path_factory.mktemp("lifecycle-retry"))


def hold(ws: Workspace, policy: str) -> None:
    ws.kubectl(
        "patch", "localqueue", fx.CLUSTER_QUEUE, "-n", ws.namespace, "--type", "merge",
        "-p", json.dumps({"spec": {"stopPolicy": policy}}),
    )  # fmt: skip


def first_attempt_fails(ws: Workspace, name: str, outcome: str, *args: str):
    """Run `tau run <args>` and make its first attempt end with the KWOK `outcome`."""
    hold(ws, "Hold")
    try:
        process = ws.popen("run", *args)
        wait_for(f"Job {name}", lambda: ws.get("job", name, "-n", ws.namespace), timeout=90)
        stamp = {"metadata": {"annotations": {fx.POD_OUTCOME_ANNOTATION: outcome}}}
        ws.kubectl(
            "patch", "job", name, "-n", ws.namespace, "--type", "merge",
            "-p", json.dumps({"spec": {"template": stamp}}),
        )  # fmt: skip
    finally:
        hold(ws, "None")
    try:
        out, err = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def env_of(ws: Workspace, name: str) -> dict[str, str]:
    job = ws.get("job", name, "-n", ws.namespace)
    [container] = job["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value", "") for e in container.get("env") or []}


def events(ws: Workspace, name: str) -> dict[str, str]:
    items = (ws.get("events", "-n", ws.namespace) or {}).get("items") or []
    return {
        e["reason"]: e["message"]
        for e in items
        if e["involvedObject"]["name"] == name and e.get("reportingComponent") == "tau-cli"
    }


def test_a_preempted_run_is_retried_with_retry_env_and_succeeds(ws: Workspace) -> None:
    ws.target("preempt", job_target("retry-preempt", resilience={"max_retries": 2, **FAST}))
    result = first_attempt_fails(ws, "retry-preempt", fx.OUTCOME_PREEMPTED, "preempt")
    assert result.returncode == 0, result.stderr
    assert "resilience: watching" in result.stderr
    assert "(max 2 retries, retry on: Preempted, Evicted)" in result.stderr
    assert "attempt 1/2 failed (Preempted) — retrying in 1s" in result.stderr
    assert "retry 1/2 submitted, watching..." in result.stderr
    assert f"workload {ws.namespace}/retry-preempt completed successfully" in result.stderr
    env = env_of(ws, "retry-preempt")
    assert env["TAU_RETRY_ATTEMPT"] == "1"
    assert env["TAU_RETRY_MAX"] == "2"
    assert env["TAU_RETRY_REASON"] == "Preempted"
    # Nothing is mounted at /data: no checkpoint path is promised to the retry.
    assert "TAU_RESUME_FROM" not in env
    assert (
        "note: no volume is mounted at /data/checkpoints/finetunes/retry-preempt" in result.stderr
    )
    recorded = events(ws, "retry-preempt")
    assert recorded["RayJobAttempt"].startswith(
        "submission_id=retry-preempt attempt=1/2 failure=Preempted signature=pod="
    )
    assert "recovered_after_attempt=1" in recorded["RayJobRetrySucceeded"]

    history = json.loads(ws.tau("run", "history", "retry-preempt", "-o", "json").stdout)
    assert history["attempt"] == 2
    assert [(e["event"], e["failure"]) for e in history["entries"]] == [
        ("retry", "Preempted"),
        ("recovered", "Preempted"),
    ]
    # -o yaml prints the same history, entries and all, valid against its schema.
    assert ws.document(RunHistory, "run", "history", "retry-preempt") == history


def test_an_unknown_failure_is_never_retried(ws: Workspace) -> None:
    ws.target("crash", job_target("retry-crash", resilience={"max_retries": 2, **FAST}))
    result = first_attempt_fails(ws, "retry-crash", fx.OUTCOME_FAIL, "crash")
    assert result.returncode == 1
    assert (
        f"workload {ws.namespace}/retry-crash failed (Unknown) — not in retry_on list "
        "[Preempted, Evicted]"
    ) in result.stderr
    assert "Traceback" not in result.stderr
    assert "TAU_RETRY_ATTEMPT" not in env_of(ws, "retry-crash")  # still the first attempt
    watched = ws.tau("run", "status", "retry-crash", "--watch", "--interval", "1s")
    assert watched.returncode == 1
    assert f"startup phase failed for {ws.namespace}/retry-crash" in watched.stderr
    assert "[!]  Container start" in watched.stdout

    assert "1/1 started reason=main=Error exit=1" in watched.stdout  # it ran, then exited
    assert "Failure: Unknown — application crash: container main" in watched.stdout

    for force in ((), ("--force",)):
        resumed = ws.tau("run", "resume", "retry-crash", "--config", "tau/crash.yaml", *force)
        assert resumed.returncode == 1
        assert "failed with non-retryable reason Unknown (application crash" in resumed.stderr
        assert "`tau run cancel retry-crash` and resubmit" in resumed.stderr
        assert "(owner: researcher)" in resumed.stderr


def test_a_preempted_run_is_preempted_for_status_resume_and_history_alike(ws: Workspace) -> None:
    ws.target("preempted", job_target("run-preempted"))
    submitted = first_attempt_fails(ws, "run-preempted", fx.OUTCOME_PREEMPTED, "preempted")
    assert submitted.returncode == 0, submitted.stderr

    def failed() -> bool:
        job = ws.get("job", "run-preempted", "-n", ws.namespace) or {}
        conditions = (job.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Failed" and c["status"] == "True" for c in conditions)

    wait_for("run-preempted to fail", failed, timeout=90)
    status = ws.tau("run", "status", "run-preempted", "-o", "json")
    assert status.returncode == 0, status.stderr
    failure = json.loads(status.stdout)["failure"]
    assert (failure["reason"], failure["category"], failure["owner"]) == (
        "Preempted",
        "preemption",
        "platform/queue owner",
    )
    human = ws.tau("run", "status", "run-preempted")
    assert "Failure: Preempted — preemption: pod run-preempted-" in human.stdout
    assert "(owner: platform/queue owner)" in human.stdout
    assert "Owner: researcher" not in human.stdout  # not an application crash
    assert "the application exited or crashed" not in human.stdout

    history = ws.tau("run", "history", "run-preempted")
    assert "Failure: Preempted — preemption" in history.stdout

    resumed = ws.tau("run", "resume", "run-preempted", "--config", "tau/preempted.yaml")
    assert resumed.returncode == 0, resumed.stderr
    assert "failure reason: Preempted" in resumed.stderr
    assert "cause: preemption: pod run-preempted-" in resumed.stderr
    assert "(owner: platform/queue owner)" in resumed.stderr
    # Nothing is mounted at /data: resume promises no checkpoint path there.
    assert "TAU_RESUME_FROM" not in env_of(ws, "run-preempted")
    assert "checkpoint: /data" not in resumed.stderr
    assert (
        "note: no volume is mounted at /data/checkpoints/finetunes/run-preempted" in resumed.stderr
    )


def test_oom_is_retried_only_when_listed_and_resume_needs_force(
    ws: Workspace, tmp_path: Path
) -> None:
    claim = results_volume(ws, tmp_path, "oom-data")  # --from must be on a mounted volume
    body = job_target("retry-oom", resilience={"max_retries": 1, **FAST})
    ws.target("oom", {**body, "storage": {"data_pvc": claim}})
    refused = first_attempt_fails(ws, "retry-oom", fx.OUTCOME_OOMKILLED, "oom")
    assert refused.returncode == 1
    assert "failed (OOMKilled) — not in retry_on list [Preempted, Evicted]" in refused.stderr

    resumed = ws.tau("run", "resume", "retry-oom", "--config", "tau/oom.yaml")
    assert resumed.returncode == 1
    assert 'workload "retry-oom" failed with OOM — the same config will likely OOM again.' in (
        resumed.stderr
    )
    assert "resume with --force" in resumed.stderr
    assert ws.get("job", "retry-oom", "-n", ws.namespace) is not None  # nothing deleted

    forced = ws.tau(
        "run", "resume", "retry-oom", "--config", "tau/oom.yaml", "--force",
        "--from", "/data/checkpoints/oom-1",
    )  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    assert "failure reason: OOMKilled" in forced.stderr
    assert "deleting failed workload" in forced.stderr
    assert env_of(ws, "retry-oom")["TAU_RESUME_FROM"] == "/data/checkpoints/oom-1"
    history = ws.tau("run", "history", "retry-oom")
    assert history.returncode == 0, history.stderr
    assert "Resumed from: /data/checkpoints/oom-1" in history.stdout
    assert "resume" in history.stdout and "OOMKilled" in history.stdout

    listed = job_target(
        "retry-oom-listed", resilience={"max_retries": 1, "retry_on": ["OOMKilled"], **FAST}
    )
    ws.target("oom-listed", listed)
    retried = first_attempt_fails(ws, "retry-oom-listed", fx.OUTCOME_OOMKILLED, "oom-listed")
    assert retried.returncode == 0, retried.stderr
    assert "attempt 1/1 failed (OOMKilled)" in retried.stderr
    assert env_of(ws, "retry-oom-listed")["TAU_RETRY_REASON"] == "OOMKilled"


def test_resume_refuses_a_run_that_succeeded(ws: Workspace) -> None:
    ws.target("fine", job_target("resume-fine"))
    assert ws.tau("run", "fine").returncode == 0
    ws.tau("run", "status", "resume-fine", "--watch", "--interval", "1s")

    def done() -> bool:
        job = ws.get("job", "resume-fine", "-n", ws.namespace)
        return any(c["type"] == "Complete" for c in job["status"].get("conditions") or [])

    wait_for("resume-fine to complete", done, timeout=60)
    resumed = ws.tau("run", "resume", "resume-fine", "--config", "tau/fine.yaml")
    assert resumed.returncode == 1
    assert 'workload "resume-fine" completed successfully — nothing to resume' in resumed.stderr

"""Failure classification (first matching rule wins) and the retry arithmetic."""

from __future__ import annotations

import copy

import pytest

from tau.connection import Target
from tau.errors import RuntimeFailure
from tau.lifecycle import status as st
from tau.lifecycle.classify import classify, diagnose, signature
from tau.lifecycle.history import history
from tau.lifecycle.resume import preflight
from tau.run.failures import Failure, backoff, format_duration, resume_env, retry_env


@pytest.mark.parametrize(
    ("recording", "expected"),
    [
        ("completed", Failure.COMPLETED),
        ("running", Failure.COMPLETED),  # startup complete: nothing to retry
        ("over-quota", Failure.RUNNING),
        ("oomkilled", Failure.OOM_KILLED),
        ("preempted", Failure.PREEMPTED),
        # KWOK's (and the kubelet's) eviction also sets DisruptionTarget, which rule 4 sees first.
        ("evicted", Failure.PREEMPTED),
        ("failed-unknown", Failure.UNKNOWN),
    ],
)
def test_recorded_outcomes_classify(snapshot, recording, expected):
    assert classify(snapshot(recording)) is expected


def test_an_evicted_condition_without_disruption_target_is_evicted(snapshot):
    snap = snapshot("evicted")
    pod = copy.deepcopy(snap.pods[0])
    pod["status"]["conditions"] = [
        c for c in pod["status"]["conditions"] if c["type"] != "DisruptionTarget"
    ] + [{"type": "Ready", "status": "False", "reason": "Evicted"}]
    snap.pods = [pod]
    snap.events = []
    assert classify(snap) is Failure.EVICTED


def test_an_oom_in_last_state_wins_over_preemption(snapshot):
    snap = snapshot("preempted")
    pod = copy.deepcopy(snap.pods[0])
    pod["status"]["containerStatuses"][0]["lastState"] = {
        "terminated": {"reason": "OOMKilled", "exitCode": 137}
    }
    snap.pods = [pod]
    assert classify(snap) is Failure.OOM_KILLED


def test_a_preemption_event_alone_is_preempted(snapshot):
    snap = snapshot("failed-unknown")
    snap.events = [*snap.events, {"reason": "Preempted", "message": "by a higher priority"}]
    assert classify(snap) is Failure.PREEMPTED


def test_only_oom_preemption_and_eviction_are_retryable():
    assert {f for f in Failure if f.retryable} == {
        Failure.OOM_KILLED,
        Failure.PREEMPTED,
        Failure.EVICTED,
    }
    assert [str(f) for f in Failure] == [
        "Unknown",
        "OOMKilled",
        "Preempted",
        "Evicted",
        "Completed",
        "Running",
    ]


def test_signature_names_the_pod_evidence(snapshot):
    snap = snapshot("oomkilled")
    assert (
        signature(snap, Failure.OOM_KILLED)
        == f"pod={snap.pods[0]['metadata']['name']} oom_killed=true"
    )
    preempted = snapshot("preempted")
    sig = signature(preempted, Failure.PREEMPTED)
    assert sig.endswith("PreemptionByScheduler") and len(sig) <= 160


def test_backoff_doubles_and_caps():
    assert [backoff(k, 30, 300) for k in range(1, 6)] == [30, 60, 120, 240, 300]
    assert [format_duration(backoff(k, 30, 300)) for k in range(1, 6)] == [
        "30s",
        "1m0s",
        "2m0s",
        "4m0s",
        "5m0s",
    ]
    assert backoff(40, 1, 2) == 2


def test_retry_env_replaces_earlier_retry_entries():
    env = (("A", "1"), ("TAU_RETRY_ATTEMPT", "1"), ("TAU_RESUME_FROM", "/old"))
    assert retry_env(env, checkpoint="/data/ck", attempt=2, maximum=3, reason="Preempted") == (
        ("A", "1"),
        ("TAU_RESUME_FROM", "/data/ck"),
        ("TAU_RETRY_ATTEMPT", "2"),
        ("TAU_RETRY_MAX", "3"),
        ("TAU_RETRY_REASON", "Preempted"),
    )
    assert resume_env(env, "/new") == (
        ("A", "1"),
        ("TAU_RETRY_ATTEMPT", "1"),
        ("TAU_RESUME_FROM", "/new"),
    )


@pytest.mark.parametrize(
    ("recording", "reason", "category", "owner"),
    [
        ("preempted", "Preempted", "preemption", "platform/queue owner"),
        ("evicted", "Preempted", "node disruption", "platform/node-pool owner"),
        ("oomkilled", "OOMKilled", "out of memory", "researcher"),
        ("failed-unknown", "Unknown", "application crash", "researcher"),
    ],
)
def test_each_recorded_failure_has_one_category_and_owner(
    snapshot, recording, reason, category, owner
):
    cause = diagnose(snapshot(recording))
    assert (str(cause.reason), cause.category, cause.owner) == (reason, category, owner)


def test_status_history_and_resume_agree_on_a_preempted_run(snapshot):
    snap = snapshot("preempted")
    doc = st.document(snap, Target(None, "", "research"))
    assert doc["failure"]["reason"] == "Preempted"
    assert doc["failure"]["owner"] == "platform/queue owner"
    assert doc["failure"]["retryable"] is True
    [failed] = [d for d in doc["diagnostics"] if d["code"] == "RUN_FAILED"]
    assert failed["message"].startswith(
        f"{snap.namespace}/preempted failed: Preempted (preemption)"
    )
    assert "(owner: platform/queue owner)" in failed["message"]
    # No phase blames the application for a preemption.
    assert all(p.get("owner") != "researcher" for p in doc["phases"] if p["status"] == "warning")
    assert history(snap, [])["failure"] == doc["failure"]
    assert preflight(snap, force=False).reason is Failure.PREEMPTED


def test_an_oom_names_memory_not_a_generic_crash(snapshot):
    cause = diagnose(snapshot("oomkilled"))
    assert "OOM-killed" in cause.summary
    assert "memory_request" in cause.hint


def test_a_crashed_run_resume_says_to_cancel_and_resubmit(snapshot):
    snap = snapshot("failed-unknown")
    for force in (False, True):
        with pytest.raises(RuntimeFailure) as raised:
            preflight(snap, force=force)
        line = raised.value.one_line()
        assert "failed with non-retryable reason Unknown (application crash: container main" in line
        assert "exited with code 1" in line
        assert "tau run cancel failed-unknown" in line and "resubmit" in line
        assert raised.value.owner == "researcher"


def test_the_resume_refusal_names_the_resubmission_of_the_config_it_was_given(snapshot):
    with pytest.raises(RuntimeFailure) as raised:
        preflight(snapshot("failed-unknown"), force=True, resubmit="tau run --config tau/x.yaml")
    assert "resubmit with `tau run --config tau/x.yaml`" in raised.value.one_line()


def test_a_running_or_succeeded_run_has_no_failure_block(snapshot):
    for recording in ("completed", "over-quota"):
        assert st.document(snapshot(recording), Target(None, "", "research"))["failure"] is None

"""What `tau run` prints after a submission: only steps that can work for this run."""

from __future__ import annotations

from tau.connection import Target
from tau.lifecycle.submit import Submitted, next_steps, profile_note

CONNECTED = Target("/k/research.yaml", "research-cluster", "research", "ml", "connection")
ROUTE = "--workspace ml --namespace research"


def test_a_run_with_a_result_location_is_told_how_to_fetch_it():
    steps = next_steps(Submitted("train", "research", "Job", "s1", results=True), CONNECTED)
    assert steps == [
        f"tau run status train --watch {ROUTE}",
        f"tau logs train {ROUTE}",
        f"tau run get train {ROUTE}",
        f"tau run cancel train {ROUTE}",
    ]


def test_a_run_without_results_on_a_pvc_is_not_told_to_run_get():
    """`tau run get` could only refuse it ("has no result annotations")."""
    steps = next_steps(Submitted("train", "research", "Job", "s1"), CONNECTED)
    assert not any(step.startswith("tau run get") for step in steps)


def test_a_profiled_run_is_told_where_its_profile_artifacts_are_stored():
    submitted = Submitted("train", "research", "Job", "s1", profile=("/data/out/profile", "ckpt"))
    note = profile_note(submitted)
    assert note == "profile artifacts: stored under /data/out/profile on PVC ckpt"


def test_a_run_without_a_profiler_gets_no_profile_note():
    assert profile_note(Submitted("train", "research", "Job", "s1", results=True)) is None

"""A retry or resume re-submits the same run with new env and a fresh submission id.

A managed workflow's env holds EnvVar entries, some backed by a Secret: the attempt's (name,
value) pairs replace the plain entries and every secret-backed one is kept.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tau.lifecycle.submit import Prepared, with_attempt
from tau.render.workflow import EnvVar
from tau.resolve.layers import Overrides, WorkspaceLayer
from tau.resolve.workflow import resolve_workflow
from tau.runconfig import load

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "aks-cpu-quickstart" / "tau.yaml"
WORKSPACE = WorkspaceLayer(name="research", namespace="research", queue="research-lq")


def prepared_workflow(env: tuple[EnvVar, ...]) -> Prepared:
    loaded = load(EXAMPLE)
    resolution = resolve_workflow(
        loaded, overrides=Overrides(), workspace=WORKSPACE, argv=("tau", "run")
    )
    resolution = replace(resolution, intent=replace(resolution.intent, env=env))
    unused: Any = None  # the attempt touches only the resolution
    return Prepared(loaded, resolution, unused, unused, "tau-system")


def test_a_workflow_attempt_replaces_the_plain_env_and_keeps_secret_entries():
    secret = EnvVar("HF_TOKEN", secret=("hf", "token"))
    prepared = prepared_workflow((EnvVar("EPOCHS", "3"), secret, EnvVar("SEED", "7")))
    assert prepared.env == (("EPOCHS", "3"), ("SEED", "7"))

    attempt = with_attempt(prepared, (("EPOCHS", "3"), ("SEED", "7"), ("TAU_RESUME", "1")))

    assert attempt.intent.env == (
        EnvVar("EPOCHS", "3"),
        EnvVar("SEED", "7"),
        EnvVar("TAU_RESUME", "1"),
        secret,
    )
    old, new = prepared.intent.provenance, attempt.intent.provenance
    assert new.submission_id and new.submission_id != old.submission_id

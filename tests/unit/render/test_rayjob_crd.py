"""Rendered RayJobs satisfy KubeRay's v1 RayJob CRD schema and lose no field to pruning."""

from __future__ import annotations

import dataclasses

import pytest

from tau.render import render

from . import intents
from .kuberay import pruned_fields, rayjob_schema, rayjob_validator

RAY_FIXTURES = {
    "rayjob-2x8": intents.rayjob_2x8,
    "ray-tune": intents.ray_tune,
    "ray-stellar": intents.ray_stellar,
    "rayjob-working-dir": intents.rayjob_working_dir,
    "ray-restricted": lambda: dataclasses.replace(intents.rayjob_2x8(), restricted=True),
}


@pytest.mark.parametrize("fixture", sorted(RAY_FIXTURES))
def test_rayjob_validates_against_the_kuberay_crd(fixture):
    (rayjob,) = render(RAY_FIXTURES[fixture]())
    errors = [error.message for error in rayjob_validator().iter_errors(rayjob)]
    assert errors == []
    assert pruned_fields(rayjob, rayjob_schema()) == []


def test_the_schema_check_catches_a_wrong_type():
    (rayjob,) = render(intents.rayjob_2x8())
    rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] = "two"
    assert list(rayjob_validator().iter_errors(rayjob))


def test_the_pruning_check_catches_a_misspelled_field():
    (rayjob,) = render(intents.rayjob_2x8())
    rayjob["spec"]["shutdownAfterJobFinish"] = True
    assert pruned_fields(rayjob, rayjob_schema()) == [".spec.shutdownAfterJobFinish"]

"""Rendered RayServices satisfy KubeRay's v1 CRD and lose no field to pruning; their Serve
config satisfies Ray Serve's own deploy schema."""

from __future__ import annotations

import pytest
import yaml

from tau.render.rayservice import render_rayservice

from . import serve_intents
from .kuberay import pruned_fields, rayservice_schema, rayservice_validator

RAY = {name: fixture for name, fixture in serve_intents.FIXTURES.items() if "rayservice" in name}


@pytest.mark.parametrize("fixture", sorted(RAY))
def test_rayservice_validates_against_the_kuberay_crd(fixture):
    (rayservice,) = render_rayservice(RAY[fixture]())
    assert [error.message for error in rayservice_validator().iter_errors(rayservice)] == []
    assert pruned_fields(rayservice, rayservice_schema()) == []


@pytest.mark.parametrize("fixture", sorted(RAY))
def test_serve_config_is_a_valid_ray_serve_deploy_config(fixture):
    from ray.serve.schema import ServeDeploySchema

    (rayservice,) = render_rayservice(RAY[fixture]())
    config = ServeDeploySchema.model_validate(yaml.safe_load(rayservice["spec"]["serveConfigV2"]))
    assert [app.import_path for app in config.applications] == [RAY[fixture]().import_path]


def test_the_pruning_check_catches_a_misspelled_field():
    (rayservice,) = render_rayservice(serve_intents.rayservice_single())
    rayservice["spec"]["serveConfig"] = "x"
    assert pruned_fields(rayservice, rayservice_schema()) == [".spec.serveConfig"]

"""A source names the run-config field the way the researcher wrote it in the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.resolve.provenance import field_path
from tau.runconfig import load
from tau.runconfig.models import Offload, Policy, RunBlock, RunConfig, Runtime


def test_a_field_path_is_the_dotted_path_written_in_the_run_config() -> None:
    assert field_path(RunConfig, "name") == "name"
    assert field_path(RunBlock, "name") == "run.name"
    assert field_path(Policy, "queue") == "policy.queue"
    assert field_path(Offload, "image") == "metrics.offload.image"
    assert field_path(Runtime, "env", "HF_HOME") == "runtime.env.HF_HOME"


def test_the_loader_places_every_derived_path_in_the_file(tmp_path: Path) -> None:
    config = tmp_path / "tau.yaml"
    config.write_text(
        "name: train\nengine: job\nentrypoint: t.py\npolicy:\n  queue: q\n"
        "runtime:\n  image: python:3.12\n  env:\n    MODE: fast\n"
    )
    (tmp_path / "t.py").write_text("print(1)\n")
    loaded = load(config)
    assert loaded.where(field_path(Policy, "queue")) == f"{config}:5:3"
    assert loaded.where(field_path(Runtime, "env", "MODE")) == f"{config}:9:5"


def test_a_field_the_model_does_not_have_is_a_programming_error() -> None:
    with pytest.raises(KeyError, match="Policy has no field 'queues'"):
        field_path(Policy, "queues")

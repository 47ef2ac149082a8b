"""The JSON Schema and the field reference are generated from the models."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
import yaml

from tau.runconfig import catalog
from tau.runconfig.reference import json_schema, markdown, rows

EXAMPLES = sorted((Path(__file__).parents[3] / "examples").glob("*/tau/*.yaml"))


def test_schema_is_a_valid_draft_2020_12_schema_with_the_contract_header() -> None:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "Tau direct run config"
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    for key in (
        "name",
        "engine",
        "entrypoint",
        "script",
        "image",
        "schema_version",
        "runtime",
        "compute",
        "execution",
        "policy",
        "storage",
        "resilience",
        "profiler",
        "experiment",
        "metrics",
        "run",
        "workflow",
    ):
        assert key in schema["properties"], key


@pytest.mark.parametrize(
    "example", EXAMPLES, ids=[str(e.parent.parent.name) + "/" + e.stem for e in EXAMPLES]
)
def test_schema_accepts_the_examples(example: Path) -> None:
    jsonschema.validate(yaml.safe_load(example.read_text()), json_schema())


def test_schema_rejects_unknown_keys_and_keeps_free_form_maps_open() -> None:
    validator = jsonschema.Draft202012Validator(json_schema())
    assert not validator.is_valid({"compute": {"gpus_per_pod": 1}})
    assert validator.is_valid(
        {"runtime": {"env": {"ANY": "v"}}, "execution": {"configs": {"x": [1]}}}
    )


def test_deprecated_aliases_are_a_deprecated_oneof_branch() -> None:
    props = json_schema()["properties"]
    gpu_class = props["policy"]["properties"]["gpu_class"]
    canonical, legacy = gpu_class["oneOf"]
    assert "a100-80gb" in canonical["enum"]
    assert legacy["deprecated"] is True and "a100-nvlink-80gb" in legacy["enum"]
    assert props["engine"]["oneOf"][1]["enum"] == ["ray"]


def test_durations_are_strings_defaults_are_strings_and_status_is_annotated() -> None:
    resilience = json_schema()["properties"]["resilience"]["properties"]
    assert resilience["backoff_initial"]["type"] == "string"
    assert resilience["backoff_initial"]["default"] == "30s"
    assert resilience["max_retries"]["default"] == "0"
    run = json_schema()["properties"]["run"]["properties"]
    assert run["ttl_seconds_after_finished"]["x-tau-status"] == "direct-only"


def test_reference_covers_every_field_once() -> None:
    assert [r.path for r in rows()] == sorted(catalog.paths())


def test_markdown_reference_shape() -> None:
    text = markdown()
    assert text.startswith("# Tau run config reference\n")
    assert "direct `tau run --config` files" in text
    assert "| Field | Status | Description | Values / defaults |" in text
    for row in (
        "| `runtime.env_secret` | supported |",
        "| `metrics.offload` | supported |",
        "| `metrics.offload.enabled` | supported |",
        "| `metrics.offload.image` | supported |",
        "| `metrics.offload.out` | supported |",
        "| `run.ttl_seconds_after_finished` | direct-only |",
        "| `storage.image_assets.name` | direct-only |",
        "| `storage.image_assets.image` | direct-only |",
        "| `storage.image_assets.source_path` | direct-only |",
        "| `storage.image_assets.mount_path` | direct-only |",
        "| `runtime.env_kv` | workflow-only |",
        "| `schema_version` | reserved |",
    ):
        assert row in text, row
    workers = next(line for line in text.splitlines() if line.startswith("| `compute.workers`"))
    assert workers.endswith("| type: integer; default: 1 |")

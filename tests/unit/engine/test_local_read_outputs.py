"""Every `tau run` read verb of a local run prints one document in json and yaml alike.

The run is real (the local engine runs the job to completion); each verb is asked twice, and
the yaml must parse to the json document, which must validate against its model's JSON Schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tau.cli.documents import Document, RunHistory, RunList, RunResults, RunStatus
from tests.unit.engine.conftest import Local, private, project, run_name

CONFIG = """\
name: hello
engine: job
entrypoint: ../job.py
compute:
  gpus: 0
runtime:
  image: python:3.12-slim
"""
JOB = """\
import os, pathlib
pathlib.Path(os.environ["TAU_OUTPUT_DIR"], "model.json").write_text('{"ok": true}')
"""
READS: dict[str, tuple[tuple[str, ...], type[Document]]] = {
    "status": (("run", "status", "{name}"), RunStatus),
    "list": (("run", "list", "--local"), RunList),
    "history": (("run", "history", "{name}"), RunHistory),
    "get": (("run", "get", "{name}"), RunResults),
    "get --artifact": (("run", "get", "{name}", "--artifact", "model.json"), RunResults),
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Local, Path, str]:
    root = tmp_path_factory.mktemp("reads")
    local = private(root)
    repo = project(root / "repo", "hello", CONFIG, {"job.py": JOB})
    started = local.tau("run", "hello", "--local", cwd=repo)
    assert started.returncode == 0, started.stderr
    return local, repo, run_name(started.stderr)


@pytest.mark.parametrize("verb", READS)
def test_yaml_parses_to_the_json_document(finished: tuple[Local, Path, str], verb: str) -> None:
    local, repo, name = finished
    argv, model = READS[verb]
    argv = tuple(part.format(name=name) for part in argv)

    as_json = local.tau(*argv, "-o", "json", cwd=repo)
    as_yaml = local.tau(*argv, "-o", "yaml", cwd=repo)

    assert (as_json.returncode, as_yaml.returncode) == (0, 0), as_json.stderr + as_yaml.stderr
    document = json.loads(as_json.stdout)
    assert _timeless(yaml.safe_load(as_yaml.stdout)) == _timeless(document)
    jsonschema.validate(document, model.model_json_schema(mode="serialization"))


def _timeless(document: dict[str, Any]) -> dict[str, Any]:
    """`age` is computed at print time, so two invocations may differ by a second."""
    for run in document.get("runs", []):
        run.pop("age")
    return document


def test_yaml_is_a_document_not_the_human_layout(finished: tuple[Local, Path, str]) -> None:
    local, repo, name = finished

    shown = yaml.safe_load(local.tau("run", "status", name, "-o", "yaml", cwd=repo).stdout)

    assert (shown["kind"], shown["status"]["state"]) == ("RunStatus", "succeeded")
    assert [pod["exitCode"] for pod in shown["pods"]] == [0]


def test_an_artifact_as_json_is_its_document_not_the_table(
    finished: tuple[Local, Path, str],
) -> None:
    local, repo, name = finished

    shown = local.tau("run", "get", name, "--artifact", "model.json", "-o", "json", cwd=repo)

    document = json.loads(shown.stdout)
    assert (document["directory"], document["content"]) == (False, '{"ok": true}')

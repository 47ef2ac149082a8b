"""`dataset:NAME@TOKEN` in runtime.env is pinned to the registered version's path at submission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau import keys
from tau.data import binding, datasets
from tau.data.root import DirectoryRoot
from tau.errors import RuntimeFailure, UsageError, ValidationError
from tau.render import render
from tau.resolve.direct import resolve_run
from tau.resolve.layers import ConfigLayer, Overrides
from tau.runconfig import load

CONFIG = """name: digits
engine: job
entrypoint: train.py
runtime:
  image: python:3.12-slim
  env:
    MNIST_DIR: dataset:mnist@latest
    LR: "0.1"
compute:
  gpus: 0
policy:
  queue: research-lq
storage:
  data_pvc: training-data
"""


def intent(tmp_path: Path, text: str = CONFIG):
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "tau.yaml").write_text(text)
    loaded = load(tmp_path / "tau.yaml")
    return resolve_run(ConfigLayer(loaded), overrides=Overrides(namespace="research")).intent


@pytest.fixture
def registry(tmp_path: Path) -> DirectoryRoot:
    data = tmp_path / "data"
    (data / "uploads/mnist").mkdir(parents=True)
    (data / "uploads/mnist/train.bin").write_bytes(b"\x01\x02")
    root = DirectoryRoot(data)
    files = datasets.scan(root, "uploads/mnist")
    reg = datasets.Registration("mnist", "3", "eval", files, "verified", "uploads/mnist")
    datasets.register(root, datasets.build(reg))
    datasets.set_alias(root, "mnist", "latest", "3")
    return root


def test_a_reference_becomes_the_pinned_path_and_is_recorded(tmp_path, registry) -> None:
    claims = []
    bound = binding.bind(intent(tmp_path), lambda claim: claims.append(claim) or registry)
    assert claims == ["training-data"]
    assert dict(bound.env)["MNIST_DIR"] == "/data/uploads/mnist"
    assert dict(bound.env)["LR"] == "0.1"
    (job,) = render(bound)
    env = {
        e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["MNIST_DIR"] == "/data/uploads/mnist"
    recorded = json.loads(job["metadata"]["annotations"][keys.DATASETS])
    assert recorded == [
        {"dataset": "mnist@3", "digest": datasets.get(registry, "mnist", "3").digest}
    ]


def test_a_run_without_references_is_untouched(tmp_path, registry) -> None:
    plain = intent(tmp_path, CONFIG.replace("dataset:mnist@latest", "/data/x"))
    assert binding.bind(plain, lambda claim: pytest.fail("no registry read")) is plain
    assert binding.unbound_warning(plain) is None


def test_client_dry_run_leaves_references_and_says_so(tmp_path) -> None:
    warning = binding.unbound_warning(intent(tmp_path))
    assert warning is not None
    assert "MNIST_DIR=dataset:mnist@latest as written" in warning


def test_a_reference_needs_the_data_pvc(tmp_path, registry) -> None:
    text = CONFIG.replace("storage:\n  data_pvc: training-data\n", "")
    with pytest.raises(ValidationError, match="mounts no data PVC at /data"):
        binding.bind(intent(tmp_path, text), lambda claim: registry)


def test_an_unknown_alias_is_a_registry_error(tmp_path, registry) -> None:
    text = CONFIG.replace("mnist@latest", "mnist@nightly")
    with pytest.raises(RuntimeFailure, match="has no version or alias 'nightly'"):
        binding.bind(intent(tmp_path, text), lambda claim: registry)


def test_a_malformed_reference_is_a_usage_error(tmp_path) -> None:
    with pytest.raises(
        UsageError, match=r"runtime.env.MNIST_DIR: 'dataset:MNIST' is not a dataset"
    ):
        binding.references((("MNIST_DIR", "dataset:MNIST"),))


def test_a_managed_workflow_reference_is_pinned_too(tmp_path, registry) -> None:
    import yaml

    from tau.resolve.workflow import resolve_workflow

    (tmp_path / "train.py").write_text("print(1)\n")
    manifest = {
        "schema_version": 1,
        "name": "digits",
        "run": {"entrypoint": "train.py", "workload_kind": "job"},
        "compute": {"gpus": 0},
        "runtime": {"pip": [], "env": [{"name": "MNIST_DIR", "value": "dataset:mnist"}]},
        "storage": {"data_pvc": "training-data"},
        "policy": {"queue": "lq"},
    }
    (tmp_path / "flow.yaml").write_text(yaml.safe_dump(manifest))
    resolution = resolve_workflow(
        load(tmp_path / "flow.yaml"), overrides=Overrides(namespace="research")
    )
    warning = binding.unbound_warning(resolution.intent) or ""
    assert "MNIST_DIR=dataset:mnist as written" in warning
    bound = binding.bind(resolution.intent, lambda claim: registry)
    (job,) = render(bound)
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "MNIST_DIR", "value": "/data/uploads/mnist"} in container["env"]
    assert json.loads(job["metadata"]["annotations"][keys.DATASETS])[0]["dataset"] == "mnist@3"

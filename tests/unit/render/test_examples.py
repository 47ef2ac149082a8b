"""The checked-in examples render, pass the Kubernetes schema, and match their goldens.

These are the done-when shapes: the quickstart CPU Job, the 2-node x 4-process torchrun
Job and the 2-worker x 8-GPU RayJob (the quickstart Ray Tune target).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tau import keys
from tau.render import redact_secrets, render
from tau.resolve.layers import ConfigLayer, Overrides, resolve_run
from tau.runconfig import load

from . import golden
from .schema import validate_rendered

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TARGETS = {
    "quickstart-train": EXAMPLES / "quickstart/tau/train.yaml",
    "quickstart-ray-tune": EXAMPLES / "quickstart/tau/ray-tune.yaml",
    "torchrun-train": EXAMPLES / "torchrun/tau/train.yaml",
}


def rendered(target: str):
    loaded = load(TARGETS[target])
    resolution = resolve_run(
        ConfigLayer(loaded),
        overrides=Overrides(namespace="research", dry_run="client"),
        argv=("tau", "run", "--dry-run=client"),
        new_id=lambda: "0" * 24,
    )
    return render(resolution.intent), resolution


# Script bytes belong to the examples, not to the rendering contract: their digests and
# encodings are pinned by the digest tests, and masked here so editing train.py does not
# churn the goldens.
CONTENT_ENV = {keys.ENV_SCRIPT_B64, keys.ENV_PAYLOAD_B64, keys.ENV_PAYLOAD_DIGEST}
CONTENT_ANNOTATIONS = {keys.SCRIPT_PAYLOAD_DIGEST, keys.PAYLOAD_DIGEST}


def mask_content(node):
    if isinstance(node, dict):
        if node.get("name") in CONTENT_ENV and "value" in node:
            return {**node, "value": "<script content>"}
        return {
            key: "<script digest>" if key in CONTENT_ANNOTATIONS else mask_content(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [mask_content(item) for item in node]
    return node


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_example_renders_valid_objects_matching_golden(target):
    objects, _ = rendered(target)
    validate_rendered(objects)
    text = golden.dump(mask_content(redact_secrets(objects)))
    golden.check(f"example-{target}", text)


def test_quickstart_is_a_cpu_job():
    (job,), resolution = rendered("quickstart-train")
    assert job["kind"] == "Job"
    assert keys.NVIDIA_GPU not in str(job)
    assert "tau/train.yaml:4:1" in str(resolution.provenance.source_of("name"))


def test_torchrun_example_is_two_nodes_of_four_processes():
    (service, job), _ = rendered("torchrun-train")
    assert service["metadata"]["name"] == "torchrun-train-headless"
    assert job["spec"]["completions"] == 2
    command = job["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert "--nnodes=2" in command and "--nproc_per_node=4" in command


def test_ray_tune_example_is_two_workers_of_eight_gpus():
    (rayjob,), _ = rendered("quickstart-ray-tune")
    (worker,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert worker["replicas"] == 2
    assert worker["rayStartParams"]["num-gpus"] == "8"
    assert rayjob["spec"]["rayClusterSpec"]["rayVersion"] == "2.40.0"

"""The checked-in examples render, pass the Kubernetes schema, and match their goldens.

These are the done-when shapes: the quickstart CPU Job, the 2-node x 4-process torchrun
Job and the 2-worker x 8-GPU RayJob (the quickstart Ray Tune target).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tau import keys
from tau.render import redact_secrets, render
from tau.resolve.direct import resolve_run
from tau.resolve.layers import ConfigLayer, Overrides
from tau.runconfig import load

from . import golden
from .schema import validate_rendered

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TARGETS = {
    "quickstart-train": EXAMPLES / "quickstart/tau/train.yaml",
    "quickstart-ray-tune": EXAMPLES / "quickstart/tau/ray-tune.yaml",
    "torchrun-train": EXAMPLES / "torchrun/tau/train.yaml",
    "portal-ray-stellar": EXAMPLES / "portal-ray-stellar/tau.yaml",
    "kind-smoke": EXAMPLES / "kind-smoke/tau.yaml",
    "kind-smoke-ray": EXAMPLES / "kind-smoke/tau-ray.yaml",
    "cpu-multi-interest-ray": EXAMPLES / "cpu-multi-interest-ray/tau.yaml",
    "ray-tune-smoke": EXAMPLES / "ray-tune-smoke/tau.yaml",
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


def test_the_platform_guides_smoke_example_is_a_cpu_only_rayjob():
    (rayjob,), _ = rendered("cpu-multi-interest-ray")
    assert rayjob["kind"] == "RayJob"
    assert keys.NVIDIA_GPU not in str(rayjob)
    (worker,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert worker["rayStartParams"]["num-gpus"] == "0"
    assert "exec python3 /script/train.py" in rayjob["spec"]["entrypoint"]


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


def test_portal_ray_stellar_offloads_from_the_head_and_ships_its_project():
    (rayjob,), resolution = rendered("portal-ray-stellar")
    annotations = rayjob["metadata"]["annotations"]
    assert annotations[keys.STELLAR_EXPERIMENT_ID] == "ray-plus-stellar"
    assert annotations[keys.STELLAR_GROUP_VALUE] == "default"
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    sidecar = head["initContainers"][-1]
    assert sidecar["name"] == "metrics-offload"
    args = sidecar["args"]
    assert args[args.index("--history") + 1] == (
        "/data/projects/taugrid-default/runs/portal-ray-stellar/metrics-history-attempt-0/*.jsonl"
    )
    claims = {
        v["persistentVolumeClaim"]["claimName"]
        for v in head["volumes"]
        if "persistentVolumeClaim" in v
    }
    assert claims == {"blob-training"}
    assert "working_dir" in rayjob["spec"]["runtimeEnvYAML"]
    assert resolution.intent.project.entrypoint == "train.py"


@pytest.mark.parametrize(
    ("config", "steps"), [("baseline", "20"), ("short-run", "10"), ("long-run", "40")]
)
def test_the_three_run_study_shares_one_experiment(config, steps):
    loaded = load(EXAMPLES / f"portal-ray-stellar/{config}.yaml")
    model = loaded.config
    assert (model.experiment.project, model.experiment_id) == ("ray-tune-demo", "ray-metric-study")
    assert (model.run_name, model.experiment.group) == (f"ray-{config}", config)
    assert model.storage.output.endswith(f"/ray-metric-study/{config}")
    assert model.runtime.env["PORTAL_DEMO_STEPS"] == steps


def test_ray_tune_smoke_is_six_trials_on_one_gpu_worker():
    (rayjob,), resolution = rendered("ray-tune-smoke")
    assert rayjob["metadata"]["name"] == "tune-smoke"
    (worker,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert (worker["replicas"], worker["rayStartParams"]["num-gpus"]) == (1, "1")
    assert rayjob["spec"]["rayClusterSpec"]["rayVersion"] == "2.56.0"
    assert "torch==2.4.0" in rayjob["spec"]["runtimeEnvYAML"]
    configs = dict(resolution.intent.configs)
    assert len(configs["lr"]) * len(configs["batch_size"]) == 6


def test_ray_tune_smoke_best_trial_is_the_one_the_docs_print(monkeypatch):
    """The docs' success gate: best config {'batch_size': 32, 'lr': 0.1}, loss 5.587555555555555."""
    import importlib.util

    train = EXAMPLES / "ray-tune-smoke" / "train.py"
    spec = importlib.util.spec_from_file_location("tune_smoke", train)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    configs = load(TARGETS["ray-tune-smoke"]).config.execution.configs
    final = {}
    for lr in configs["lr"]:
        for batch_size in configs["batch_size"]:
            reports: list[dict] = []
            monkeypatch.setattr(module, "report", reports.append)
            module.train_loop({"lr": lr, "batch_size": batch_size})
            assert [r["step"] for r in reports] == [0, 1, 2, 3, 4]
            final[(batch_size, lr)] = reports[-1]["loss"]
    best = min(final, key=final.get)
    assert best == (32, 0.1)
    assert final[best] == 5.587555555555555

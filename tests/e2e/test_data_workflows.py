"""Managed workflows and the Python SDK through a researcher workspace on the local plane.

A `schema_version: 1` manifest renders with the live workspace, passes the API server's
dry-run, is created as a Kueue-admitted RayJob and succeeds (KWOK and the fake Ray
dashboard run it); `runtime.env_kv` on a cluster without the Secrets Store CSI driver is
refused before anything is created; `tau python submit` submits a train, waits for it to
succeed and only then submits its eval.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from controller_harness import wait_for
from lifecycle_env import IMAGE, Workspace, workspace_setup

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

MANIFEST = {
    "schema_version": 1,
    "name": "wf-cpu",
    "run": {"entrypoint": "train.py", "workload_kind": "rayjob"},
    "compute": {
        "gpus": 0,
        "cpus": "500m",
        "memory": "512Mi",
        "workers": 3,
        "worker_cpus": "500m",
        "worker_memory": "512Mi",
    },
    "runtime": {"image": IMAGE, "pip": []},
}


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    yield from workspace_setup(local_cluster, tmp_path_factory.mktemp("data-workflows"))


def flow(ws: Workspace, manifest: dict, name: str = "wf.yaml") -> Path:
    directory = ws.repo / "flows"
    directory.mkdir(exist_ok=True)
    (directory / "train.py").write_text("print('training')\n")
    path = directory / name
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


def state(ws: Workspace, name: str) -> str:
    status = ws.tau("run", "status", name, "-o", "json")
    assert status.returncode == 0, status.stderr
    return json.loads(status.stdout)["status"]["state"]


def test_a_managed_manifest_renders_dry_runs_submits_and_succeeds(ws: Workspace) -> None:
    path = flow(ws, MANIFEST)
    config = str(path.relative_to(ws.repo))

    rendered = ws.tau("run", "--config", config, "--dry-run=client", "-o", "json")
    assert rendered.returncode == 0, rendered.stderr
    (rayjob,) = json.loads(rendered.stdout)
    assert rayjob["metadata"]["namespace"] == ws.namespace  # the live workspace, no placeholder
    assert rayjob["metadata"]["labels"][fx.KUEUE_QUEUE_LABEL] == fx.CLUSTER_QUEUE

    server = ws.tau("run", "--config", config, "--dry-run=server")
    assert server.returncode == 0, server.stderr
    assert "rayjob.ray.io/tau-wf-cpu created (server dry run)" in server.stdout
    assert ws.get("rayjob", "tau-wf-cpu", "-n", ws.namespace) is None

    named = ws.tau("run", "other", "--config", config, "--dry-run=client")
    assert named.returncode == 2 and "take the run name from the config file" in named.stderr

    submitted = ws.tau("run", "--config", config)
    assert submitted.returncode == 0, submitted.stderr
    assert f"RayJob {ws.namespace}/tau-wf-cpu submitted" in submitted.stdout
    created = ws.get("rayjob", "tau-wf-cpu", "-n", ws.namespace)
    annotations = created["metadata"]["annotations"]
    assert annotations["tau.azure.com/config-hash"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert annotations["tau.azure.com/submission-id"]
    (group,) = created["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert group["replicas"] == 2  # workers counts the head on a CPU RayJob
    # The workspace namespace enforces Pod Security restricted (the default): KubeRay creates
    # the pods only because tau rendered them restricted.
    head = created["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    assert head["securityContext"]["runAsNonRoot"] is True
    wait_for("the managed RayJob to succeed", lambda: state(ws, "tau-wf-cpu") == "succeeded",
             timeout=120)  # fmt: skip


def test_key_vault_secrets_need_the_secrets_store_driver(ws: Workspace) -> None:
    manifest = {**MANIFEST, "name": "wf-kv", "runtime": {**MANIFEST["runtime"],
                "env_kv": {"HF_TOKEN": "hf-token"}}}  # fmt: skip
    config = str(flow(ws, manifest, "kv.yaml").relative_to(ws.repo))
    flags = ["--key-vault", "research-kv", "--tenant-id", "72f988bf-0000-4000-8000-000000000000",
             "--workload-identity-client-id", "5e0c0a1b-0000-4000-8000-000000000002",
             "--service-account", "default"]  # fmt: skip
    rendered = ws.tau("run", "--config", config, *flags, "--dry-run=client")
    assert rendered.returncode == 0, rendered.stderr
    documents = list(yaml.safe_load_all(rendered.stdout))
    assert [d["kind"] for d in documents] == ["RayJob", "SecretProviderClass"]
    assert "hf-token" not in rendered.stdout  # which secrets feed the run stays hidden
    refused = ws.tau("run", "--config", config, *flags)
    assert refused.returncode == 1
    assert "runtime.env_kv needs the Secrets Store CSI driver" in refused.stderr
    assert ws.get("rayjob", "tau-wf-kv", "-n", ws.namespace) is None
    bare = ws.tau("run", "--config", config, "--dry-run=client")
    assert bare.returncode == 2 and "bare secret name 'hf-token' needs --key-vault" in bare.stderr


MODULE = textwrap.dedent(
    f"""
    import tau

    @tau.train(name="sdk-train", gpus=0, workers=2, image={IMAGE!r}, pip=[],
               cpu_request="500m", memory_request="512Mi",
               worker_cpu_request="500m", worker_memory_request="512Mi")
    def train(ctx):
        ctx.report(loss=0.5)

    @tau.eval(name="sdk-eval", after="sdk-train", gpus=1, cpu_workers=1, image={IMAGE!r},
              pip=[], cpu_request="500m", memory_request="512Mi",
              worker_cpu_request="1", worker_memory_request="1Gi")
    def evaluate(ctx):
        print(ctx.upstream_checkpoint)
    """
)


def test_the_sdk_submits_the_eval_only_after_its_train_succeeded(ws: Workspace) -> None:
    module = ws.repo / "workflow.py"
    module.write_text(MODULE)
    dry = ws.tau("python", "submit", "workflow.py", "--dry-run=server")
    assert dry.returncode == 0, dry.stderr
    assert "rayjob.ray.io/tau-sdk-train created (server dry run)" in dry.stdout
    assert "rayjob.ray.io/tau-sdk-eval created (server dry run)" in dry.stdout

    submitted = ws.tau("python", "submit", "workflow.py", timeout=300)
    assert submitted.returncode == 0, submitted.stderr
    assert "waiting for tau-sdk-train to succeed before its evals" in submitted.stderr
    assert state(ws, "tau-sdk-train") == "succeeded"
    evaluation = ws.get("rayjob", "tau-sdk-eval", "-n", ws.namespace)
    assert evaluation["metadata"]["labels"]["tau.azure.com/workload-kind"] == "rayjob-eval"
    gpu = evaluation["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]
    env = {e["name"]: e.get("value") for e in gpu["template"]["spec"]["containers"][0]["env"]}
    assert env["TAU_UPSTREAM_CHECKPOINT"] == (
        "/data/checkpoints/finetunes/sdk-train/artifacts/last.safetensors"
    )

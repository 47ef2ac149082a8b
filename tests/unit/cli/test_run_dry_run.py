"""`tau run --dry-run=client` through the installed console script, as a researcher runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
TAU = shutil.which("tau", path=str(Path(sys.executable).parent)) or "tau"


def tau(*args: str, cwd: Path, env: dict[str, str] | None = None):
    environment = {**os.environ, **(env or {})}
    environment.pop("TAU_CONTEXT", None)
    return subprocess.run(
        [TAU, *args], cwd=cwd, capture_output=True, text=True, check=False, env=environment
    )


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No user connection state leaks in: a private Tau config dir."""
    config_dir = tmp_path / "tau-config"
    config_dir.mkdir()
    return {"TAU_CONFIG_DIR": str(config_dir)}


def test_quickstart_prints_a_job_and_its_provenance(isolated):
    result = tau("run", "train", "--dry-run=client", cwd=REPO / "examples/quickstart", env=isolated)
    assert result.returncode == 0, result.stderr
    (job,) = list(yaml.safe_load_all(result.stdout))
    assert job["kind"] == "Job"
    assert job["spec"]["suspend"] is True
    stderr = result.stderr
    assert "SETTING" in stderr and "SOURCE" in stderr
    assert "tau/train.yaml:4:1" in stderr  # name, with file:line
    assert "built-in default" in stderr
    assert "warning: client dry-run could not resolve namespace, queue" in stderr
    assert job["metadata"]["namespace"] == "tau-unresolved-namespace"
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "tau-unresolved-local-queue"


def test_torchrun_prints_service_then_indexed_job_and_flags_win(isolated):
    result = tau(
        "run",
        "train",
        "--dry-run=client",
        "-n",
        "research",
        cwd=REPO / "examples/torchrun",
        env=isolated,
    )
    assert result.returncode == 0, result.stderr
    service, job = yaml.safe_load_all(result.stdout)
    assert (service["kind"], job["kind"]) == ("Service", "Job")
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["metadata"]["namespace"] == "research"
    assert "CLI flag (-n/--namespace)" in result.stderr


def test_ray_tune_target_renders_two_eight_gpu_workers_as_json(isolated):
    result = tau(
        "run",
        "ray-tune",
        "--dry-run=client",
        "-o",
        "json",
        cwd=REPO / "examples/quickstart",
        env=isolated,
    )
    assert result.returncode == 0, result.stderr
    (rayjob,) = json.loads(result.stdout)
    (worker,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert (worker["replicas"], worker["rayStartParams"]["num-gpus"]) == (2, "8")
    assert "compute.gpus_per_worker" in result.stderr


def test_secrets_are_redacted_everywhere(tmp_path, isolated):
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / "tau.yaml").write_text(
        "name: secretive\nengine: job\nentrypoint: train.py\n"
        "runtime:\n  image: python:3.12-slim\n"
        "  env_secret:\n    HF_TOKEN: very-private-secret:hf-key\n"
        "compute:\n  gpus: 0\npolicy:\n  namespace: research\n  queue: research-queue\n"
    )
    result = tau("run", "--dry-run=client", cwd=tmp_path, env=isolated)
    assert result.returncode == 0, result.stderr
    assert "very-private-secret" not in result.stdout + result.stderr
    assert "hf-key" not in result.stdout + result.stderr
    assert "<redacted>" in result.stdout
    assert "warning:" not in result.stderr.split("SETTING")[0].replace("note:", "")


def test_positional_target_overrides_the_name_with_explicit_config(isolated):
    result = tau(
        "run",
        "renamed",
        "--config",
        "tau/train.yaml",
        "--dry-run=client",
        cwd=REPO / "examples/quickstart",
        env=isolated,
    )
    assert result.returncode == 0, result.stderr
    (job,) = yaml.safe_load_all(result.stdout)
    assert job["metadata"]["name"] == "renamed"


def test_invalid_dry_run_mode_and_output_are_usage_errors(isolated):
    cwd = REPO / "examples/quickstart"
    bad_mode = tau("run", "train", "--dry-run=foo", cwd=cwd, env=isolated)
    assert bad_mode.returncode == 2
    assert "--dry-run must be one of: client, server" in bad_mode.stderr
    bad_output = tau("run", "train", "--dry-run=client", "-o", "table", cwd=cwd, env=isolated)
    assert bad_output.returncode == 2
    assert "--output must be one of: yaml, json" in bad_output.stderr


def test_render_errors_are_one_line_exit_2(tmp_path, isolated):
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / "tau.yaml").write_text("name: tune\nengine: rayjob\nentrypoint: train.py\n")
    long_name = "a" * 48  # a positional name bypasses the config's own length check
    result = tau("run", long_name, "-c", "tau.yaml", "--dry-run=client", cwd=tmp_path, env=isolated)
    assert result.returncode == 2
    assert "KubeRay limit is 47" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_snapshot_profile_renders_offline_with_profile_provenance(tmp_path, isolated):
    from tau import keys
    from tau.profiles.normalize import profile_set_hash
    from tau.profiles.select import ProfileSet
    from tau.profiles.snapshot import snapshot_from, write_snapshot

    profile = {
        "name": "research.training.1x",
        "applicability": {"teams": ["research"], "lanes": ["training"]},
        "gpusPerWorker": 1,
        "workerCount": 1,
        "mode": "fixed",
        "placement": "independent",
        "defaultLocalQueue": "jobqueue",
        "executionTarget": "singleCluster",
        "priorities": {"disableDefaultPriorities": True},
        "conditions": [{"type": keys.COND_READY, "status": "True", "observedGeneration": 7}],
    }
    profiles = (profile,)
    write_snapshot(
        snapshot_from(ProfileSet(7, profile_set_hash(list(profiles)), profiles, "test")),
        tmp_path / "profiles.snapshot.yaml",
    )
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / "tau.yaml").write_text(
        "name: offline\nengine: job\nentrypoint: train.py\nruntime:\n  image: python:3.12\n"
        "policy:\n  workload_profile_snapshot: profiles.snapshot.yaml\n"
        "  namespace: research\n  team: research\n  lane: training\n"
    )
    result = tau("run", "--dry-run=client", cwd=tmp_path, env=isolated)
    assert result.returncode == 0, result.stderr
    (job,) = yaml.safe_load_all(result.stdout)
    annotations = job["metadata"]["annotations"]
    assert annotations[keys.WORKLOAD_PROFILE] == "research.training.1x"
    assert annotations[keys.TAU_CLUSTER_GENERATION] == "7"
    assert job["metadata"]["labels"][keys.KUEUE_QUEUE_NAME] == "jobqueue"
    assert "profile (research.training.1x gpusPerWorker" in result.stderr


def test_checked_in_connection_descriptor_supplies_workspace_and_context(tmp_path, isolated):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "tau").mkdir()
    (tmp_path / "tau/workspace.connection.yaml").write_text(
        "schema: tau.workspace.connection.v1\nworkspace: vision-lab\n"
        "cluster:\n  contextName: aks-vision\naccess:\n  method: kubeconfig\n"
        "authorization:\n  mode: cluster-wide\nrequirements:\n  minTauVersion: 0.1.0\n"
    )
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / "tau/train.yaml").write_text(
        "name: vision\nengine: job\nentrypoint: ../train.py\nruntime:\n  image: python:3.12\n"
        "compute:\n  gpus: 0\n"
    )
    result = tau("run", "train", "--dry-run=client", cwd=tmp_path, env=isolated)
    assert result.returncode == 0, result.stderr
    (job,) = yaml.safe_load_all(result.stdout)
    assert job["metadata"]["labels"]["tau.azure.com/workspace"] == "vision-lab"
    assert "connection descriptor (tau/workspace.connection.yaml)" in result.stderr
    conflicting = tau(
        "run", "train", "--dry-run=client", "--workspace", "other", cwd=tmp_path, env=isolated
    )
    assert conflicting.returncode == 2
    assert "workspace is ambiguous" in conflicting.stderr


def test_two_job_nodes_without_a_launcher_render_torchrun_rendezvous(tmp_path, isolated):
    (tmp_path / "train.py").write_text("print('rank')\n")
    (tmp_path / "tau.yaml").write_text(
        "name: ddp\nengine: job\nentrypoint: train.py\nimage: registry.example.com/t:1\n"
        "compute:\n  gpus: 0\nexecution:\n  nodes: 2\n"
    )
    result = tau("run", "--dry-run=client", "-o", "json", cwd=tmp_path, env=isolated)
    assert result.returncode == 0, result.stderr
    service, job = json.loads(result.stdout)
    assert service["metadata"]["name"] == "ddp-headless"
    assert job["spec"]["completionMode"] == "Indexed"
    assert (
        "--rdzv-endpoint=ddp-0.ddp-headless:29500"
        in job["spec"]["template"]["spec"]["containers"][0]["command"][2]
    )

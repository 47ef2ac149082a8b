"""Profile snapshots interoperate: ours and upstream's carry the same profileSetHash.

The controller publishes profiles on the local control plane, `tau cluster profiles export`
writes the snapshot, and `tau run --dry-run=client` renders from it offline. Snapshots whose
hash Go computed go through the same loader: Go `encoding/json` vectors render through
`tau run`, and upstream's published fixture — a serving profile — renders through
`tau serve deploy --dry-run=client` (and `tau run` refuses it only for its lane).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from controller_harness import Controller, get, install, unique, wait_for
from tau_cli import error_line, run_tau

from tau import keys
from tau.profiles.normalize import profile_set_hash

FIXTURES = Path(__file__).resolve().parents[1] / "unit" / "profiles" / "fixtures"
UPSTREAM_SNAPSHOT = FIXTURES / "upstream" / "serve-h100-eight.snapshot.yaml"
GO_VECTORS = json.loads((FIXTURES / "go-encoding-vectors.json").read_text())["cases"]


@pytest.fixture(scope="module")
def controller(local_cluster, tmp_path_factory) -> Iterator[Controller]:
    system = unique("tau-sys")
    install(local_cluster, system)
    previous = get(local_cluster, "clusters.tau.azure.com", "cluster")
    process = Controller(local_cluster, system, tmp_path_factory.mktemp("controller"))
    process.start()
    yield process
    process.stop()
    local_cluster.kubectl("delete", "clusters.tau.azure.com", "cluster", check=False)
    if previous:
        meta = previous["metadata"]
        previous["metadata"] = {
            "name": "cluster",
            "labels": meta.get("labels", {}),
            "annotations": meta.get("annotations", {}),
        }
        previous.pop("status", None)
        local_cluster.kubectl("apply", "-f", "-", input=json.dumps(previous))


def declared(namespace: str) -> list[dict]:
    scope = {"teams": ["research"], "namespaces": [namespace]}
    return [
        {
            "name": "e2e.training.1x",
            "description": "One GPU <training> & evaluation",  # Go escapes <, > and &
            "applicability": {**scope, "lanes": ["training"]},
            "gpusPerWorker": 1,
            "workerCount": 1,
            "mode": "fixed",
            "placement": "independent",
            "defaultLocalQueue": "jobqueue",
            "priorities": {
                "workloadPriorityClassName": "taugrid-default",
                "podPriorityClassName": "taugrid-default",
            },
        },
        {
            "name": "e2e.eval.cpu",
            "applicability": {**scope, "lanes": ["eval"]},
            "gpusPerWorker": 0,
            "workerCount": 1,
            "mode": "fixed",
            "placement": "independent",
            "defaultLocalQueue": "jobqueue",
            "priorities": {"disableDefaultPriorities": True},
        },
    ]


def run_config(snapshot: str, profile: str, namespace: str, team: str, lane: str) -> str:
    return (
        f"name: {unique('interop')}\nengine: job\nentrypoint: train.py\n"
        "runtime:\n  image: python:3.12\n"
        f"policy:\n  workload_profile_snapshot: {snapshot}\n  profile: {profile}\n"
        f"  namespace: {namespace}\n  team: {team}\n  lane: {lane}\n"
    )


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "train.py").write_text("print('hello')\n")
    return tmp_path


@pytest.fixture
def offline_env(tmp_path) -> dict[str, str]:
    """No cluster reachable and no user state: the render is offline by construction."""
    env = {**os.environ, "TAU_CONFIG_DIR": str(tmp_path / "tau-config")}
    env["KUBECONFIG"] = str(tmp_path / "no-such-kubeconfig")
    env.pop("TAU_CONTEXT", None)
    return env


def render(project: Path, env: dict[str, str], config: str) -> dict:
    (project / "tau.yaml").write_text(config)
    result = run_tau("run", "--dry-run=client", cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    (job,) = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    return job


def test_controller_published_profiles_export_and_render_offline(
    local_cluster, controller, namespace, project, offline_env
):
    local_cluster.apply(
        [
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "jobqueue", "namespace": namespace},
                "spec": {"clusterQueue": "jobqueue"},
            }
        ]
    )
    cluster = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauCluster",
        "metadata": {"name": "cluster"},
        "spec": {"workloadProfiles": declared(namespace)},
    }
    local_cluster.kubectl("apply", "-f", "-", input=json.dumps(cluster))

    def published():
        obj = get(local_cluster, "clusters.tau.azure.com", "cluster") or {}
        status = (obj.get("status") or {}).get("workloadProfiles") or {}
        current = status.get("observedGeneration") == obj["metadata"]["generation"]
        return obj if current and status.get("ready") == 2 else None

    obj = wait_for("both workload profiles Ready", published, timeout=90)
    status = obj["status"]["workloadProfiles"]
    assert status["profileSetHash"] == profile_set_hash(status["profiles"])

    snapshot = project / "profiles.snapshot.yaml"
    admin = {**os.environ, "KUBECONFIG": str(local_cluster.kubeconfig)}
    exported = run_tau(
        "cluster", "profiles", "export", "--output", str(snapshot), cwd=project, env=admin
    )
    assert exported.returncode == 0, exported.stderr
    written = yaml.safe_load(snapshot.read_text())
    assert written["profileSetHash"] == status["profileSetHash"]
    assert written["tauClusterGeneration"] == obj["metadata"]["generation"]

    job = render(
        project,
        offline_env,
        run_config(snapshot.name, "e2e.training.1x", namespace, "research", "training"),
    )
    annotations = job["metadata"]["annotations"]
    assert annotations[keys.WORKLOAD_PROFILE_SET_HASH] == status["profileSetHash"]
    assert annotations[keys.TAU_CLUSTER_GENERATION] == str(obj["metadata"]["generation"])
    assert annotations[keys.WORKLOAD_PROFILE] == "e2e.training.1x"
    pod = job["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "taugrid-default"

    job = render(
        project,
        offline_env,
        run_config(snapshot.name, "e2e.eval.cpu", namespace, "research", "eval"),
    )
    assert job["metadata"]["annotations"][keys.WORKLOAD_PROFILE] == "e2e.eval.cpu"
    assert "priorityClassName" not in job["spec"]["template"]["spec"]
    assert keys.KUEUE_PRIORITY_CLASS not in job["metadata"].get("labels", {})

    snapshot.write_text(snapshot.read_text().replace("e2e.eval.cpu", "e2e.eval.gpu"))
    (project / "tau.yaml").write_text(
        run_config(snapshot.name, "e2e.eval.gpu", namespace, "research", "eval")
    )
    edited = run_tau("run", "--dry-run=client", cwd=project, env=offline_env)
    assert edited.returncode == 2
    assert "does not match its profiles" in error_line(edited)


def test_go_hashed_snapshot_renders_offline(project, offline_env):
    (case,) = [c for c in GO_VECTORS if c["name"] == "several-profiles-sorted-by-name"]
    ready = {"type": "Ready", "status": "True", "observedGeneration": 4, "reason": "Ready"}
    snapshot = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauWorkloadProfileSnapshot",
        "tauClusterGeneration": 4,
        "profileSetHash": case["sha256"],
        "profiles": [{**p, "conditions": [ready]} for p in case["profiles"]],
    }
    (project / "go.snapshot.yaml").write_text(json.dumps(snapshot))
    job = render(
        project,
        offline_env,
        run_config("go.snapshot.yaml", "alpha", "team-a", "research", "training"),
    )
    assert job["metadata"]["annotations"][keys.WORKLOAD_PROFILE_SET_HASH] == case["sha256"]


def test_upstream_snapshot_fixture_verifies_and_only_its_scope_decides(project, offline_env):
    """Upstream's fixture is a serving profile (lane `serving`), which `tau run` lanes exclude,
    so a run is refused for applicability, never for integrity."""
    shutil.copy(UPSTREAM_SNAPSHOT, project / UPSTREAM_SNAPSHOT.name)
    config = run_config(
        UPSTREAM_SNAPSHOT.name, "h100-nvl-8node", "taugrid-default", "research", "training"
    )
    (project / "tau.yaml").write_text(config)
    result = run_tau("run", "--dry-run=client", cwd=project, env=offline_env)
    assert result.returncode == 2
    line = error_line(result)
    assert "'h100-nvl-8node' does not apply here: lane 'training' is not in serving" in line
    assert "owner: researcher" in line


def test_upstream_serving_snapshot_renders_offline_through_tau_serve(project, offline_env):
    shutil.copy(UPSTREAM_SNAPSHOT, project / UPSTREAM_SNAPSHOT.name)
    published = yaml.safe_load(UPSTREAM_SNAPSHOT.read_text())
    (fixture_profile,) = published["profiles"]
    gpus = fixture_profile["gpusPerWorker"] * fixture_profile["workerCount"]
    result = run_tau(
        "serve",
        "deploy",
        "upstream-model",
        "--profile",
        "h100-nvl-8node",
        "--nodes",
        str(fixture_profile["workerCount"]),
        "--image",
        "example.invalid/ray:fixture",
        "-n",
        "taugrid-default",
        "--dry-run=client",
        "--workload-profile-snapshot",
        UPSTREAM_SNAPSHOT.name,
        cwd=project,
        env=offline_env,
    )
    assert result.returncode == 0, result.stderr
    (service,) = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert service["kind"] == "RayService"
    annotations = service["metadata"]["annotations"]
    assert published["profileSetHash"].startswith("ee32774f")
    assert annotations[keys.WORKLOAD_PROFILE_SET_HASH] == published["profileSetHash"]
    assert annotations[keys.TAU_CLUSTER_GENERATION] == str(published["tauClusterGeneration"])
    assert annotations[keys.WORKLOAD_PROFILE] == "h100-nvl-8node"
    assert annotations[keys.GPU_COUNT] == str(gpus) == "8"

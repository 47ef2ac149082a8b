"""examples/kind-smoke, as the seeds' Kind smoke test runs it, on the local cluster's real node.

The Job and the RayJob targets are the example's own files with two substitutions: the runtime
image is this checkout's (pushed to the cluster's registry) and `policy.profile` names one of
the workload profiles the workspace's platform publishes on the ClusterQueue holding only the
real kubelet node's flavor (one worker for the Job, two for the RayJob), so that is where both
run. Both are submitted with `tau run`, admitted by Kueue and
executed: KubeRay's head and workers run Ray from the runtime image and KubeRay learns the job's
end from the head's real dashboard. Every outcome asserted comes from what the kubelet and Ray
reported; no KWOK outcome annotation is involved. The RayJob's driver and its workers import
the tasks from a sibling module that reached them only through `run.working_dir`, and
`tau logs --follow`, as the researcher, shows the driver's output from the head's driver-log
container.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from controller_harness import wait_for
from lifecycle_env import Workspace, workspace_setup
from real_node import expect_restricted_by_default, offer_real_node

from hack.images import ImageRef
from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kind-smoke"
JOB_MARKER = "tau kind job smoke complete"
RAY_MARKER = "tau kind ray smoke complete"
DATA_PVC = "kind-smoke-data"
# The platform's profiles on the real node; a researcher picks one with policy.profile.
JOB_PROFILE = "e2e.real"
RAY_PROFILE = "e2e.real.ray2"
PROFILES = {"tau.yaml": JOB_PROFILE, "tau-ray.yaml": RAY_PROFILE}


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster,
    local_images: dict[str, ImageRef],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Workspace]:
    for workspace in workspace_setup(local_cluster, tmp_path_factory.mktemp("kind-smoke")):
        expect_restricted_by_default(workspace)
        offer_real_node(
            workspace,
            {JOB_PROFILE: {}, RAY_PROFILE: {"workerCount": 2, "placement": "multi-node-nccl"}},
        )
        claim = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": DATA_PVC, "namespace": workspace.namespace},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": fx.STORAGE_CLASS,
                "resources": {"requests": {"storage": "64Mi"}},
            },
        }
        local_cluster.create([claim])
        # `tau run get` reads the node-local volume with a helper pod: the platform's knobs
        # name the cluster's busybox and let it onto the tainted real node.
        toleration = fx.REAL_NODE_TOLERATION
        workspace.env |= {
            "TAU_HELPER_IMAGE": local_cluster.images[fx.SHELL_IMAGE],
            "TAU_HELPER_NODE_SELECTOR": ",".join(
                f"{k}={v}" for k, v in fx.REAL_NODE_SELECTOR.items()
            ),
            "TAU_HELPER_TOLERATIONS": (
                f"{toleration['key']}={toleration['value']}:{toleration['effect']}"
            ),
        }
        yield workspace


def example(ws: Workspace, name: str, image: str) -> str:
    """The example directory, copied into the connected repository, its target on our image
    and on the platform's real-node profile; the RayJob target ships the directory itself
    (`run.working_dir`)."""
    target = ws.repo / "kind-smoke"
    if not target.exists():
        shutil.copytree(EXAMPLE, target)
    body = yaml.safe_load((EXAMPLE / name).read_text())
    body["runtime"]["image"] = image
    body.setdefault("policy", {})["profile"] = PROFILES[name]
    (target / name).write_text(yaml.safe_dump(body, sort_keys=False))
    return f"kind-smoke/{name}"


def status(ws: Workspace, name: str) -> dict[str, Any]:
    result = ws.tau("run", "status", name, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def finished(ws: Workspace, name: str) -> dict[str, Any] | None:
    document = status(ws, name)
    return document if document["status"]["state"] in {"succeeded", "failed"} else None


def pods(ws: Workspace, selector: str) -> list[dict[str, Any]]:
    listed = ws.get("pods", "-n", ws.namespace, "-l", selector) or {}
    return listed.get("items") or []


def assert_ran_for_real(pod: dict[str, Any], image: str) -> None:
    assert pod["spec"]["nodeName"] == fx.REAL_NODE, pod["metadata"]["name"]
    assert fx.POD_OUTCOME_ANNOTATION not in (pod["metadata"].get("annotations") or {})
    statuses = pod["status"].get("containerStatuses") or []
    assert statuses and all(s["imageID"].endswith(image.rsplit("@", 1)[1]) for s in statuses)


def phases(document: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["status"] for p in document["phases"]}


def test_the_job_target_runs_logs_its_marker_and_leaves_its_result_on_the_pvc(
    ws: Workspace, local_images: dict[str, ImageRef]
) -> None:
    image = local_images["runtime"].reference
    config = example(ws, "tau.yaml", image)
    submitted = ws.tau("run", "--config", config)
    assert submitted.returncode == 0, submitted.stderr

    document = wait_for("the smoke Job to finish", lambda: finished(ws, "kind-smoke"), 300, 2)
    [pod] = pods(ws, "job-name=kind-smoke")
    assert document["status"]["state"] == "succeeded", (document, pod.get("status"))
    assert_ran_for_real(pod, image)
    [main] = [c for c in pod["status"]["containerStatuses"] if c["name"] == "main"]
    assert main["state"]["terminated"]["exitCode"] == 0
    assert phases(document)["Kueue admission"] == "done"
    job = ws.get("job", "kind-smoke", "-n", ws.namespace)
    assert job["metadata"]["labels"][fx.KUEUE_QUEUE_LABEL] == fx.REAL_CLUSTER_QUEUE

    logs = ws.tau("logs", "kind-smoke")
    assert logs.returncode == 0, logs.stderr
    assert JOB_MARKER in logs.stdout.splitlines()

    result = ws.tau("run", "get", "kind-smoke", "--artifact", "result.txt", "-o", "raw")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{JOB_MARKER}\n"


def test_the_rayjob_target_runs_ray_on_a_head_and_two_workers_and_logs_its_driver(
    ws: Workspace, local_images: dict[str, ImageRef]
) -> None:
    image = local_images["runtime"].reference
    config = example(ws, "tau-ray.yaml", image)
    submitted = ws.tau("run", "--config", config)
    assert submitted.returncode == 0, submitted.stderr

    def submitted_to_ray() -> dict[str, Any] | None:
        rayjob = ws.get("rayjobs.ray.io", "kind-smoke-ray", "-n", ws.namespace) or {}
        status = rayjob.get("status") or {}
        return rayjob if status.get("jobStatus") in {"RUNNING", "SUCCEEDED"} else None

    rayjob = wait_for("the RayJob's driver to start on the real head", submitted_to_ray, 900, 2)
    # The researcher follows the driver from its start, as the seeds advise for a RayJob (its
    # head, and the log with it, is gone 15 s after the job ends).
    follow = ws.popen("logs", "kind-smoke-ray", "--follow")
    try:
        selector = f"ray.io/cluster={rayjob['status']['rayClusterName']}"

        def all_running() -> list[dict[str, Any]] | None:
            found = pods(ws, selector)
            up = [p for p in found if p["status"].get("phase") == "Running"]
            return found if len(found) == 3 and len(up) == 3 else None

        # The driver's tasks need the workers (the head offers no CPUs): all three run at once.
        ray_pods = wait_for("the head and both workers running", all_running, 300, 1)
        document = wait_for("the RayJob to finish", lambda: finished(ws, "kind-smoke-ray"), 600, 2)
        rayjob = ws.get("rayjobs.ray.io", "kind-smoke-ray", "-n", ws.namespace)
        assert document["status"]["state"] == "succeeded", (document, rayjob["status"])
        # The follower ends when KubeRay deletes the finished cluster's head.
        out, err = follow.communicate(timeout=180)
    finally:
        if follow.poll() is None:
            follow.kill()
    assert follow.returncode == 0, err
    lines = out.splitlines()
    assert RAY_MARKER in lines, out
    assert lines[-1] == RAY_MARKER  # the driver's last line, nothing of Ray's own log after it
    assert "nodes=3" in out  # the head and both workers joined the Ray cluster
    # The tasks come from smoke_tasks.py, which only `run.working_dir` shipped: the driver
    # imported it, and the workers that ran its task (they print their hostnames) did too.
    [workers] = [line for line in lines if line.startswith("workers: ")]
    worker_pods = {
        p["metadata"]["name"]
        for p in ray_pods
        if p["metadata"]["labels"]["ray.io/node-type"] == "worker"
    }
    ran_on = set(workers.removeprefix("workers: ").split(", "))
    assert ran_on and ran_on <= worker_pods, (workers, worker_pods)
    assert rayjob["status"]["jobStatus"] == "SUCCEEDED"
    assert phases(document)["Kueue admission"] == "done"
    kinds = sorted(p["metadata"]["labels"]["ray.io/node-type"] for p in ray_pods)
    assert kinds == ["head", "worker", "worker"]
    for pod in ray_pods:
        assert_ran_for_real(pod, image)

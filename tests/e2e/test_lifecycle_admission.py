"""Where a run stops, and who owns the fix: quota, queue, workspace readiness, RBAC scope;
server-side dry runs through the real apiserver and Kueue webhooks; a RayJob through
its RayCluster onto GPU nodes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import yaml
from controller_harness import wait_for
from lifecycle_env import DDP_PROFILE, H200_PROFILE, Workspace, job_target, workspace_setup
from tau_cli import error_line, run_tau

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx
from tau import keys

RAY_IMAGE = "rayproject/ray:2.40.0-py312-gpu"


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    yield from workspace_setup(local_cluster, tmp_path_factory.mktemp("lifecycle-admission"))


def status(ws: Workspace, name: str) -> dict:
    result = ws.tau("run", "status", name, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def rayjob_target(name: str) -> dict:
    return {
        "name": name,
        "engine": "rayjob",
        "entrypoint": "../src/repo/train.py",
        "runtime": {"image": RAY_IMAGE},
        "compute": {"head_cpu_request": "1", "head_memory_request": "2Gi"},
        "policy": {"profile": H200_PROFILE},
    }


def test_over_quota_stops_at_kueue_admission_with_hint_and_owner(ws: Workspace) -> None:
    body = job_target("too-big")
    body["compute"]["cpu_request"] = "1000"
    ws.target("too-big", body)
    assert ws.tau("run", "too-big").returncode == 0

    def pending_reason() -> dict | None:
        document = status(ws, "too-big")
        phase = next(p for p in document["phases"] if p["name"] == "Kueue admission")
        return phase if "insufficient quota: " in phase["detail"] else None

    phase = wait_for("Kueue's pending reason", pending_reason, timeout=60)
    assert phase["status"] == "active"
    # Kueue's sentence read back per flavor, the missing amount never cut off.
    assert "cpu 1k requested, capacity 32, 968 more needed" in phase["detail"]  # Kueue's "1k"
    assert "more needed" in phase["detail"]
    document = status(ws, "too-big")
    [pending] = [d for d in document["diagnostics"] if d["code"] == "KUEUE_PENDING"]
    assert pending["message"].startswith("Workload ") and "(waiting " in pending["message"]
    assert "more needed" in pending["message"]
    assert f"(ClusterQueue {fx.CLUSTER_QUEUE})" in pending["suggestion"]
    [workload] = document["workloads"]
    assert workload["waiting"]["clusterQueue"] == fx.CLUSTER_QUEUE
    assert workload["waiting"]["shortfall"][0]["resource"] == "cpu"
    assert phase["hint"].startswith("quota is reserved per LocalQueue/ClusterQueue")
    assert phase["owner"] == "platform/queue owner"
    human = ws.tau("run", "status", "too-big")
    assert "[>]  Kueue admission" in human.stdout
    assert "Owner: platform/queue owner" in human.stdout
    assert "[KUEUE_PENDING]" in human.stdout

    def position() -> dict | None:
        (workload,) = status(ws, "too-big")["workloads"]
        return workload["queuePosition"]

    # Kueue's visibility API, read with the researcher's own role.
    at = wait_for("the run's position in Kueue's queue", position, timeout=60)
    assert at["source"] == "kueue-visibility" and at["inLocalQueue"] == 0
    assert at["localQueue"] == fx.CLUSTER_QUEUE
    queued = ws.tau("run", "status", "too-big").stdout
    assert f"is 1st in LocalQueue {fx.CLUSTER_QUEUE}" in queued
    assert "next to be admitted when quota frees" in queued
    watched = ws.tau(
        "run", "status", "too-big", "--watch", "--interval", "1s", "--max-iterations", "2"
    )
    assert watched.returncode == 0  # still queued: watching stops at the iteration limit
    assert ws.tau("run", "cancel", "too-big").returncode == 0


def test_a_queue_other_than_the_workspace_queue_is_refused_before_submission(
    ws: Workspace,
) -> None:
    body = job_target("wrong-queue")
    body["policy"]["queue"] = "someone-elses-queue"
    ws.target("wrong-queue", body)
    result = ws.tau("run", "wrong-queue")
    assert result.returncode == 2
    line = error_line(result)
    assert "someone-elses-queue" in line and "queue" in line
    assert ws.get("job", "wrong-queue", "-n", ws.namespace) is None


def test_server_dry_run_passes_the_apiserver_and_kueue_webhooks(ws: Workspace) -> None:
    ws.target("dry-job", job_target("dry-job"))
    job = ws.tau("run", "dry-job", "--dry-run=server")
    assert job.returncode == 0, job.stderr
    assert job.stdout.strip() == "job.batch/dry-job created (server dry run)"
    ws.target("dry-ray", rayjob_target("dry-ray"))
    ray = ws.tau("run", "dry-ray", "--dry-run=server")
    assert ray.returncode == 0, ray.stderr
    assert ray.stdout.strip() == "rayjob.ray.io/dry-ray created (server dry run)"
    assert ws.get("job", "dry-job", "-n", ws.namespace) is None
    assert ws.get("rayjob", "dry-ray", "-n", ws.namespace) is None


def test_a_rayjob_goes_through_its_raycluster_onto_gpu_nodes(ws: Workspace) -> None:
    ws.target("ray", rayjob_target("ray-train"))
    ws.kubectl(
        "patch", "localqueue", fx.CLUSTER_QUEUE, "-n", ws.namespace, "--type", "merge",
        "-p", '{"spec":{"stopPolicy":"Hold"}}',
    )  # fmt: skip
    try:
        submitted = ws.tau("run", "ray")
        assert submitted.returncode == 0, submitted.stderr
        assert f"RayJob {ws.namespace}/ray-train submitted" in submitted.stdout
        # Keep the fake Ray job running long enough to look at its cluster.
        ws.kubectl(
            "annotate", "rayjob", "ray-train", "-n", ws.namespace,
            f"{fx.POD_RUN_DURATION_ANNOTATION}=20s",
        )  # fmt: skip
    finally:
        ws.kubectl(
            "patch", "localqueue", fx.CLUSTER_QUEUE, "-n", ws.namespace, "--type", "merge",
            "-p", '{"spec":{"stopPolicy":"None"}}',
        )  # fmt: skip

    def running() -> dict | None:
        document = status(ws, "ray-train")
        return document if document["status"]["state"] == "running" else None

    document = wait_for("the RayJob to run", running, timeout=120)
    names = [p["name"] for p in document["phases"]]
    assert names[:3] == ["Submitted", "Kueue admission", "RayCluster"]
    assert names[-2:] == ["RayJob status", "Compute release"]
    phases = {p["name"]: p for p in document["phases"]}
    assert phases["Submitted"]["detail"] == "RayJob created"
    assert phases["Kueue admission"]["status"] == "done"
    assert phases["RayCluster"]["status"] == "done"
    assert phases["RayCluster"]["detail"].startswith("created ray-train-")
    workers = [p for p in document["pods"] if "-w-" in p["name"] or "worker" in p["name"]]
    assert workers and all(p["node"] in fx.H200_POOL.node_names for p in workers)
    # The driver's output is the log of the head's driver-log container: the researcher role
    # reads it with pods/log alone, no exec and no fallback note.
    logs = ws.tau("logs", "ray-train", "--prefix")
    assert logs.returncode == 0, logs.stderr
    assert "note:" not in logs.stderr
    [head] = [p["name"] for p in document["pods"] if "head" in p["name"]]
    assert f"[pod/{head}/driver-log] {fx.DEFAULT_POD_LOG_LINE}" in logs.stdout.splitlines()

    def finished() -> dict | None:
        document = status(ws, "ray-train")
        return document if document["status"]["state"] == "succeeded" else None

    document = wait_for("the RayJob to finish", finished, timeout=120)
    phases = {p["name"]: p for p in document["phases"]}
    assert phases["RayJob status"]["status"] == "done"
    assert phases["Compute release"]["status"] in ("done", "active")
    cancelled = ws.tau("run", "cancel", "ray-train")
    assert cancelled.returncode == 0, cancelled.stderr
    assert 'rayjob.ray.io "ray-train" deleted' in cancelled.stdout
    assert "compute released" in cancelled.stdout


def test_the_researcher_can_do_nothing_in_another_namespace(ws: Workspace) -> None:
    other = "default"
    for args in (
        ("run", "status", "anything", "-n", other),
        ("run", "list", "-n", other),
        ("run", "cancel", "anything", "-n", other),
        ("logs", "anything", "-n", other),
    ):
        result = ws.tau(*args)
        assert result.returncode == 1, args
        assert error_line(result).startswith("error: authorization: cannot "), args
    submitted = ws.tau("run", "dry-job", "-n", other)
    assert submitted.returncode == 2
    assert "namespace" in error_line(submitted)


def test_multi_node_torchrun_creates_the_job_then_its_owned_service_or_rolls_back(
    ws: Workspace,
) -> None:
    body = job_target("ddp", profile=DDP_PROFILE, gpus=8)
    body["compute"].update({"cpu_request": "4", "memory_request": "16Gi"})
    body["execution"] = {"launcher": "torchrun", "nodes": 2, "processes_per_node": 8}
    ws.target("ddp", body)

    # A Service of the same name that tau does not own makes the Service creation fail: the
    # freshly created Job must not be left behind without its rendezvous Service.
    foreign = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "ddp-headless", "namespace": ws.namespace},
        "spec": {"clusterIP": "None", "ports": [{"name": "c10d", "port": 29500}]},
    }
    ws.cluster.apply([foreign])
    refused = ws.tau("run", "ddp")
    assert refused.returncode == 1
    line = error_line(refused)
    assert "the Job was rolled back" in line and "conflict" in line
    wait_for("the rolled-back Job to go", lambda: not ws.get("job", "ddp", "-n", ws.namespace))
    ws.cluster.kubectl("delete", "service", "ddp-headless", "-n", ws.namespace, "--wait=true")

    # The chart's researcher role creates the Service itself (no extra grant).
    submitted = ws.tau("run", "ddp")
    assert submitted.returncode == 0, submitted.stderr
    job = ws.get("job", "ddp", "-n", ws.namespace)
    service = ws.get("service", "ddp-headless", "-n", ws.namespace)
    [owner] = service["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Job", "ddp", job["metadata"]["uid"])
    assert job["spec"]["completionMode"] == "Indexed" and job["spec"]["parallelism"] == 2
    cancelled = ws.tau("run", "cancel", "ddp")
    assert cancelled.returncode == 0, cancelled.stderr
    # Cancel deletes the Service, or garbage collection of the deleted Job gets there first:
    # either way the researcher is left with neither.
    wait_for("the cancelled Job to go", lambda: not ws.get("job", "ddp", "-n", ws.namespace))
    wait_for(
        "the rendezvous Service to go",
        lambda: not ws.get("service", "ddp-headless", "-n", ws.namespace),
    )


def test_a_gpu_class_a_profile_flavor_serves_is_submitted_and_one_it_lacks_names_the_flavors(
    ws: Workspace,
) -> None:
    """examples/torchrun's policy.gpu_class with a selected profile: the controller publishes
    each flavor's class, the resolver checks it, the server dry run renders the selector."""
    body = job_target("ddp-class", profile=DDP_PROFILE, gpus=8)
    body["execution"] = {"launcher": "torchrun", "nodes": 2, "processes_per_node": 8}
    body["policy"]["gpu_class"] = fx.GPU_CLASS_H200
    ws.target("ddp-class", body)
    rendered = ws.tau("run", "ddp-class", "--dry-run=client")
    assert rendered.returncode == 0, rendered.stderr
    [job] = [d for d in yaml.safe_load_all(rendered.stdout) if d and d["kind"] == "Job"]
    selector = job["spec"]["template"]["spec"]["nodeSelector"]
    assert selector[fx.GPU_CLASS_LABEL] == fx.GPU_CLASS_H200
    assert job["metadata"]["labels"][keys.PROFILE] == DDP_PROFILE
    served = ws.tau("run", "ddp-class", "--dry-run=server")
    assert served.returncode == 0, served.stderr

    body["policy"]["gpu_class"] = "h100-95gb"
    ws.target("ddp-class", body)
    refused = ws.tau("run", "ddp-class", "--dry-run=server")
    assert refused.returncode == 2
    line = error_line(refused)
    assert "policy.gpu_class='h100-95gb' is not served by workload profile" in line
    assert f"{fx.GPU_FLAVOR_H200}={fx.GPU_CLASS_H200}" in line
    assert f"{fx.GPU_FLAVOR_A100}={fx.GPU_CLASS_A100}" in line


def test_a_missing_local_queue_is_refused_at_workspace_readiness(ws: Workspace) -> None:
    ws.controller.stop()
    try:
        ws.kubectl("delete", "localqueue", fx.CLUSTER_QUEUE, "-n", ws.namespace)
        ws.target("no-queue", job_target("no-queue"))
        result = ws.tau("run", "no-queue")
        assert result.returncode == 1
        line = error_line(result)
        assert line.startswith("error: workspace readiness: ")
        assert f'LocalQueue "{fx.CLUSTER_QUEUE}"' in line and "platform operator" in line
        assert ws.get("job", "no-queue", "-n", ws.namespace) is None
    finally:
        ws.controller.start()
    wait_for(
        "the controller to restore the LocalQueue",
        lambda: ws.get("localqueue", fx.CLUSTER_QUEUE, "-n", ws.namespace),
        timeout=90,
    )


def test_a_degraded_workspace_refuses_submission(ws: Workspace) -> None:
    def phase() -> str:
        obj = ws.get("workspaces.tau.azure.com", ws.name, "-n", ws.system_namespace)
        return (obj.get("status") or {}).get("phase", "")

    def point_at(queue: str) -> None:
        ws.kubectl(
            "patch", "workspaces.tau.azure.com", ws.name, "-n", ws.system_namespace,
            "--type", "merge", "-p", json.dumps({"spec": {"queue": queue}}),
        )  # fmt: skip

    workspace = ws.get("workspaces.tau.azure.com", ws.name, "-n", ws.system_namespace)
    point_at("no-such-clusterqueue")
    try:
        wait_for("the workspace to degrade", lambda: phase() == "Degraded", timeout=90)
        ws.target("degraded", job_target("degraded"))
        result = ws.tau("run", "degraded")
        assert result.returncode == 1
        line = error_line(result)
        assert line.startswith("error: workspace readiness: ")
        assert "Degraded" in line and "platform operator" in line
        assert ws.get("job", "degraded", "-n", ws.namespace) is None
    finally:
        # The module's later tests submit to this workspace: leave it as it was found.
        point_at(workspace["spec"]["queue"])
        wait_for("the workspace to recover", lambda: phase() == "Ready", timeout=90)


def test_without_a_descriptor_context_alone_submits_to_the_primary_workspace(
    ws: Workspace,
) -> None:
    """Install guide step 5: `tau run --context "$TAU_CONTEXT" --config F` from a plain
    checkout; the controller's primary marker names the workspace, no --workspace needed."""
    checkout = ws.repo.parent / "operator-checkout"
    (checkout / "smoke").mkdir(parents=True, exist_ok=True)
    (checkout / "smoke" / "train.py").write_text("print('smoke')\n")
    body = job_target("operator-smoke")
    body["entrypoint"] = "train.py"
    (checkout / "smoke" / "tau.yaml").write_text(yaml.safe_dump(body, sort_keys=False))
    admin = yaml.safe_load(ws.cluster.kubeconfig.read_text())
    env = {
        **ws.env,
        "KUBECONFIG": str(ws.cluster.kubeconfig),
        "TAU_SYSTEM_NAMESPACE": ws.system_namespace,
    }
    args = ("run", "--context", admin["current-context"], "--config", "smoke/tau.yaml")
    result = run_tau(*args, "--dry-run=server", cwd=checkout, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "job.batch/operator-smoke created (server dry run)"
    other = run_tau(*args, "--workspace", "no-such-workspace", cwd=checkout, env=env)
    assert other.returncode != 0 and "no-such-workspace" in error_line(other)

"""The first-run walkthrough, verbatim, against the local control plane through a workspace
connection: validate → client dry-run → submit → status --watch → logs → list → cancel.

A CPU Job and an H200 GPU Job each go Submitted → admitted → scheduled on a node of the right
pool → Complete, and cancel gives the quota back.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_harness import wait_for
from lifecycle_env import H200_PROFILE, Workspace, job_target, workspace_setup

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    yield from workspace_setup(local_cluster, tmp_path_factory.mktemp("lifecycle-first-run"))


def succeeded(ws: Workspace, name: str) -> dict | None:
    status = ws.tau("run", "status", name, "-o", "json")
    assert status.returncode == 0, status.stderr
    document = json.loads(status.stdout)
    return document if document["status"]["state"] == "succeeded" else None


def phases(document: dict) -> dict[str, str]:
    return {p["name"]: p["status"] for p in document["phases"]}


def test_first_run_walkthrough_cpu_job(ws: Workspace) -> None:
    ws.target("train", job_target("first-train"))

    validated = ws.tau("run", "validate", "--config", "tau/train.yaml")
    assert validated.returncode == 0, validated.stderr
    assert validated.stdout.strip() == "tau/train.yaml is valid"

    rendered = ws.tau("run", "train", "--dry-run=client")
    assert rendered.returncode == 0, rendered.stderr
    assert "kind: Job" in rendered.stdout
    assert f"namespace: {ws.namespace}" in rendered.stdout
    assert ws.get("job", "first-train", "-n", ws.namespace) is None  # nothing created

    submitted = ws.tau("run", "train")
    assert submitted.returncode == 0, submitted.stderr
    assert f"Job {ws.namespace}/first-train submitted" in submitted.stdout
    assert "tau run status first-train --watch" in submitted.stdout
    job = ws.get("job", "first-train", "-n", ws.namespace)
    assert job["metadata"]["labels"][fx.KUEUE_QUEUE_LABEL] == fx.CLUSTER_QUEUE
    assert job["metadata"]["annotations"]["tau.azure.com/submission-id"]

    # --watch stops once the workload is ready (or complete), exit 0.
    watched = ws.tau("run", "status", "first-train", "--watch", "--interval", "1s")
    assert watched.returncode == 0, watched.stderr
    assert "watching" in watched.stdout and "[x]  Ready" in watched.stdout

    document = wait_for("the Job to complete", lambda: succeeded(ws, "first-train"), timeout=60)
    assert document["kind"] == "RunStatus"
    assert document["apiVersion"] == "tau.azure.com/v1alpha1"
    assert document["status"]["state"] == "succeeded"
    assert document["status"]["workloadKind"] == "Job"
    assert phases(document) == {
        "Submitted": "done",
        "Kueue admission": "done",
        "Pod scheduling": "done",
        "DRA allocation": "skipped",
        "Image pull": "done",
        "Init containers": "skipped",
        "Container start": "done",
        "Ready": "done",
    }
    [pod] = document["pods"]
    assert pod["node"] in fx.CPU_NODES
    assert document["actions"][0]["name"] == "logs"

    logs = ws.tau("logs", "first-train")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.splitlines() == [fx.DEFAULT_POD_LOG_LINE]
    pod_name = pod["name"]
    prefixed = ws.tau("run", "logs", "first-train", "--prefix", "--timestamps", "-c", "main")
    assert prefixed.returncode == 0, prefixed.stderr
    [line] = prefixed.stdout.splitlines()
    assert line.startswith(f"[pod/{pod_name}/main] ")
    assert line.endswith(f"Z {fx.DEFAULT_POD_LOG_LINE}")  # kubelet timestamp, then the line
    assert ws.tau("run", "logs", "first-train", "--tail", "0").stdout == ""
    wrong = ws.tau("run", "logs", "first-train", "-c", "sidecar")
    assert wrong.returncode == 2 and '"sidecar" is not in pod' in wrong.stderr
    # Outside the repository, tau logs finds the run through the cached connection.
    elsewhere = ws.repo.parent / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    found = ws.tau("logs", "first-train", cwd=elsewhere)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == [fx.DEFAULT_POD_LOG_LINE]
    routed = ws.tau("logs", "first-train", "--workspace", ws.name, cwd=elsewhere)
    assert routed.returncode == 0, routed.stderr
    missing = ws.tau("logs", "no-such-run")
    assert missing.returncode == 1
    assert "nor in any cached workspace connection" in missing.stderr

    # A finished run has no live GPU telemetry: reported unavailable, never as zero.
    profiled = json.loads(
        ws.tau("run", "status", "first-train", "--run-profile", "-o", "json").stdout
    )
    assert profiled["metrics"]["gpuRuntime"]["available"] is False
    assert profiled["profile"][0]["value"].startswith("unavailable")

    # No storage.output on a PVC: get explains what it needs instead of guessing.
    results = ws.tau("run", "get", "first-train")
    assert results.returncode == 2
    assert "has no result annotations" in results.stderr and "--path and --pvc" in results.stderr
    escaped = ws.tau("run", "get", "first-train", "--artifact", "../../etc/passwd")
    assert escaped.returncode == 2 and "not a clean path inside the results" in escaped.stderr

    listed = ws.tau("run", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0] == "History: live-only"
    assert "first-train" in listed.stdout and "Complete" in listed.stdout


def test_gpu_job_lands_on_h200_and_cancel_releases_quota(ws: Workspace) -> None:
    body = job_target("gpu-train", profile=H200_PROFILE, gpus=8)
    body["compute"].update({"cpu_request": "4", "memory_request": "16Gi"})
    ws.target("gpu", body)
    submitted = ws.tau("run", "gpu")
    assert submitted.returncode == 0, submitted.stderr

    watched = ws.tau("run", "status", "gpu-train", "--watch", "--interval", "1s")
    assert watched.returncode == 0, watched.stderr
    document = wait_for("the GPU Job to complete", lambda: succeeded(ws, "gpu-train"), timeout=60)
    assert set(phases(document).values()) <= {"done", "skipped"}
    [workload] = document["workloads"]
    assert workload["flavors"] == [fx.GPU_FLAVOR_H200]
    [pod] = document["pods"]
    assert pod["node"] in fx.H200_POOL.node_names

    listed = json.loads(ws.tau("run", "list", "-o", "json").stdout)
    assert {"first-train", "gpu-train"} <= {run["name"] for run in listed["runs"]}
    assert listed["historyState"] == "live-only"

    for name in ("first-train", "gpu-train"):
        cancelled = ws.tau("run", "cancel", name)
        assert cancelled.returncode == 0, cancelled.stderr
        assert f'job.batch "{name}" deleted' in cancelled.stdout
        assert "compute released" in cancelled.stdout
        assert ws.get("job", name, "-n", ws.namespace) is None

    def queue_idle() -> bool:
        lq = ws.get("localqueues.kueue.x-k8s.io", fx.CLUSTER_QUEUE, "-n", ws.namespace) or {}
        st = lq.get("status") or {}
        usage = [
            r.get("total")
            for flavor in st.get("flavorsUsage") or []
            for r in flavor.get("resources") or []
        ]
        return st.get("admittedWorkloads") == 0 and all(u in (None, "0") for u in usage)

    wait_for("the workspace LocalQueue to release its quota", queue_idle, timeout=60)
    again = ws.tau("run", "list")
    assert "No jobs found" in again.stdout


def results_volume(ws: Workspace, tmp_path: Path) -> str:
    """A bound PVC for run results (the local plane has no provisioner)."""
    claim = "results"
    ws.cluster.apply(
        [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": f"results-{ws.namespace}"},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteMany"],
                    "storageClassName": "",
                    "hostPath": {"path": str(tmp_path)},
                    "claimRef": {"namespace": ws.namespace, "name": claim},
                },
            },
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "namespace": ws.namespace},
                "spec": {
                    "accessModes": ["ReadWriteMany"],
                    "storageClassName": "",
                    "volumeName": f"results-{ws.namespace}",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
        ]
    )
    return claim


def answer_reader_pods(ws: Workspace, tmp_path: Path, outputs: list[list[str]]) -> None:
    """Play the reader pod's part on KWOK: each new reader pod prints the next output."""

    def serve() -> None:
        served: set[str] = set()
        deadline = time.monotonic() + 120
        while outputs and time.monotonic() < deadline:
            pods = ws.get("pods", "-n", ws.namespace, "-l", "tau.azure.com/role=reader") or {}
            for pod in pods.get("items") or []:
                name = pod["metadata"]["name"]
                if name in served or pod["metadata"].get("deletionTimestamp"):
                    continue
                served.add(name)
                log = tmp_path / f"{name}.log"
                lines = outputs.pop(0)
                log.write_text("".join(f"2026-01-01T00:00:00Z stdout F {x}\n" for x in lines))
                logs = {
                    "apiVersion": "kwok.x-k8s.io/v1alpha1",
                    "kind": "Logs",
                    "metadata": {"name": name, "namespace": ws.namespace},
                    "spec": {"logs": [{"containers": ["reader"], "logsFile": str(log)}]},
                }
                ws.cluster.apply([logs])
                ws.kubectl(
                    "annotate", "pod", name, "-n", ws.namespace,
                    f"{fx.POD_OUTCOME_ANNOTATION}={fx.OUTCOME_SUCCEED}",
                )  # fmt: skip
            time.sleep(0.3)

    threading.Thread(target=serve, daemon=True).start()


def test_get_lists_and_fetches_results_through_a_read_only_reader_pod(
    ws: Workspace, tmp_path: Path
) -> None:
    claim = results_volume(ws, tmp_path)
    body = job_target("with-results", storage={"data_pvc": claim, "output": "/data/out/run-1"})
    ws.target("results", body)
    submitted = ws.tau("run", "results")
    assert submitted.returncode == 0, submitted.stderr
    job = ws.get("job", "with-results", "-n", ws.namespace)
    annotations = job["metadata"]["annotations"]
    assert annotations["tau.azure.com/result-path"] == "/data/out/run-1"
    assert annotations["tau.azure.com/result-pvc"] == claim

    # The reader lists the directory, then prints the file as base64 (`base64 FILE`).
    metrics = base64.b64encode(b'{"loss": 0.1}\n').decode()
    answer_reader_pods(ws, tmp_path, [["model/", "metrics.json"], [metrics]])
    listed = ws.tau("run", "get", "with-results")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[:6] == [
        "PATH: /data/out/run-1",
        f"PVC: {claim}",
        "(directory)",
        "ENTRIES:",
        "  model/",
        "  metrics.json",
    ]
    assert "Fetch one file with: tau run get with-results --artifact <NAME>" in listed.stdout
    raw = ws.tau("run", "get", "with-results", "--artifact", "metrics.json", "-o", "raw")
    assert raw.returncode == 0, raw.stderr
    assert raw.stdout == '{"loss": 0.1}\n'
    readers = ws.get("pods", "-n", ws.namespace, "-l", "tau.azure.com/role=reader") or {}
    assert all(p["metadata"].get("deletionTimestamp") for p in readers.get("items") or [])
    assert ws.tau("run", "cancel", "with-results").returncode == 0


def test_an_external_job_is_hidden_by_default_but_observable(ws: Workspace) -> None:
    external = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "external-job", "namespace": ws.namespace},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "work", "image": "example.azurecr.io/tool:2"}],
                }
            },
        },
    }
    ws.cluster.apply([external])
    wait_for(
        "the external Job's pod",
        lambda: (ws.get("pods", "-n", ws.namespace, "-l", "job-name=external-job") or {}).get(
            "items"
        ),
        timeout=60,
    )
    assert "external-job" not in ws.tau("run", "list").stdout
    listed = ws.tau("run", "list", "--include-external")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if "external-job" in line)
    assert row.split()[1] == "Job" and row.split()[-1] == "external"
    assert "SOURCE" in listed.stdout

    logs = ws.tau("logs", "external-job", "-c", "work", "--timestamps")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.strip().endswith(fx.DEFAULT_POD_LOG_LINE)
    hints = ws.tau("run", "status", "external-job", "--diagnostic-hints")
    assert hints.returncode == 0, hints.stderr
    assert "Deep diagnostics (kubectl escape hatches):" in hints.stdout
    assert "'kubectl' '--context' 'research-cluster' '--kubeconfig'" in hints.stdout
    assert "Kueue admission" in hints.stdout  # no Workload: points at the queue label
    ws.kubectl("delete", "job", "external-job", "-n", ws.namespace, "--wait=false")


def test_unknown_run_is_reported_with_the_list_action(ws: Workspace, tmp_path: Path) -> None:
    result = ws.tau("run", "status", "no-such-run", "-o", "json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["status"]["state"] == "not_found"
    assert document["diagnostics"][0]["code"] == "RUN_NOT_FOUND"
    assert document["actions"][0]["command"]["argv"][:3] == ["tau", "run", "list"]


def test_the_first_run_dead_ends_are_gone(ws: Workspace) -> None:
    ws.target("train-dead-ends", job_target("dead-ends"))

    mistyped = ws.tau("run", "train-dead-endz")
    assert mistyped.returncode == 2
    assert 'did you mean "train-dead-ends"?' in mistyped.stderr

    server = ws.tau("run", "train-dead-ends", "--dry-run=server", "-o", "json")
    assert server.returncode == 0, server.stderr
    [job] = json.loads(server.stdout)
    assert job["kind"] == "Job" and job["metadata"]["uid"]  # what the API server answered
    assert ws.get("job", "dead-ends", "-n", ws.namespace) is None

    submitted = ws.tau("run", "train-dead-ends")
    assert submitted.returncode == 0, submitted.stderr
    assert "KUBECONFIG=" not in submitted.stdout
    route = f"--workspace {ws.name} --namespace {ws.namespace}"
    assert f"tau run status dead-ends --watch {route}" in submitted.stdout
    status = ws.tau("run", "status", "dead-ends", "-o", "json")
    assert status.returncode == 0, status.stderr
    document = json.loads(status.stdout)
    for action in document["actions"]:
        assert action["command"]["env"] == {}
        assert action["command"]["argv"][-4:] == route.split()
        assert not action["command"]["shell"].startswith("KUBECONFIG=")
    # The printed route reaches the run from outside the repository, as the researcher.
    elsewhere = ws.repo.parent / "elsewhere-dead-ends"
    elsewhere.mkdir(exist_ok=True)
    copied = ws.tau("run", "status", "dead-ends", *route.split(), "-o", "json", cwd=elsewhere)
    assert copied.returncode == 0, copied.stderr
    assert json.loads(copied.stdout)["status"]["found"] is True
    cancelled = ws.tau("run", "cancel", "dead-ends", *route.split(), cwd=elsewhere)
    assert cancelled.returncode == 0, cancelled.stderr

    missing = ws.tau(
        "workspace", "status", ws.name + "x", "--system-namespace", ws.system_namespace
    )
    assert missing.returncode == 1
    assert f'no TauWorkspace "{ws.name}x"' in missing.stderr
    assert f'did you mean "{ws.name}"?' in missing.stderr
    assert "you may not read" not in missing.stderr

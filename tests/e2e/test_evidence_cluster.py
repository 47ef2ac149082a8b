"""Evidence from cluster runs, executed on the real node from this checkout's runtime image.

A Job with `metrics.offload` writes JSONL; after it finishes the workspace store on its PVC
holds the run with the exact point count and its final state. Killing the
offload container mid-run (the kubelet restarts the native sidecar) duplicates no point. A
failed staged run publishes nothing, a successful one is answered by `tau run get`. A RayJob
with `metrics.offload` does the same from its head, where KubeRay runs the driver: Ray itself
runs there (KubeRay's head and worker from the runtime image). A RayJob importing a sibling
module shipped by `run.working_dir` is the kind-smoke RayJob target (tests/e2e/test_kind_smoke.py).

The store is read where it lives: the PVC is a hostPath volume on this machine, and
`taugrid-portal experiment --store <that path>/.tau/expstore` reads it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from controller_harness import wait_for
from lifecycle_env import Workspace, job_target, workspace_setup
from real_node import expect_restricted_by_default, hostpath_claim, offer_real_node

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

CLAIM = "blob-training"
REAL_PROFILE = "e2e.real"
SMALL = {"cpu_request": "200m", "memory_request": "512Mi", "memory_limit": "1Gi"}


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster,
    tmp_path_factory: pytest.TempPathFactory,
    local_images,
) -> Iterator[Workspace]:
    for workspace in workspace_setup(local_cluster, tmp_path_factory.mktemp("evidence")):
        expect_restricted_by_default(workspace)
        offer_real_node(workspace, {REAL_PROFILE: {}})
        workspace.env["TAU_METRICS_OFFLOAD_IMAGE"] = local_images["runtime"].reference
        # `tau run get` reads the PVC with a helper pod: from the cluster's registry, on the
        # real node (the KWOK nodes run no container).
        workspace.env["TAU_HELPER_IMAGE"] = local_cluster.images[fx.SHELL_IMAGE]
        workspace.env["TAU_HELPER_NODE_SELECTOR"] = ",".join(
            f"{k}={v}" for k, v in fx.REAL_NODE_SELECTOR.items()
        )
        taint = fx.REAL_NODE_TAINT
        workspace.env["TAU_HELPER_TOLERATIONS"] = (
            f"{taint['key']}={taint['value']}:{taint['effect']}"
        )
        yield workspace


@pytest.fixture(scope="module")
def data_dir(ws: Workspace, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace data PVC, a hostPath volume this test can read directly."""
    root = tmp_path_factory.mktemp("blob-training")
    hostpath_claim(ws, CLAIM, root)
    return root


TRAINER = """\
import json, os, pathlib, sys, time
out = pathlib.Path(os.environ["TAU_OUTPUT_DIR"]) / "metrics-history-attempt-0"
out.mkdir(parents=True, exist_ok=True)
with open(out / "history.jsonl", "a") as handle:
    for step in range({steps}):
        row = {{"_step": step, "_timestamp": time.time(), "loss": 1 / (step + 1),
                "accuracy": 1 - 1 / (step + 1)}}
        handle.write(json.dumps(row) + "\\n")
        handle.flush()
        time.sleep({pause})
staging = os.environ.get("TAU_OUTPUT_STAGING_DIR")
if staging:
    pathlib.Path(staging).mkdir(parents=True, exist_ok=True)
    (pathlib.Path(staging) / "model.txt").write_text("weights\\n")
print("trainer done", flush=True)
sys.exit({code})
"""


def evidence_job(ws: Workspace, image: str, name: str, **options: Any) -> dict[str, Any]:
    (ws.repo / "src").mkdir(exist_ok=True)
    script = TRAINER.format(
        steps=options.get("steps", 30),
        pause=options.get("pause", 0.05),
        code=options.get("code", 0),
    )
    (ws.repo / "src" / f"{name}.py").write_text(script)
    body = job_target(name, profile=REAL_PROFILE, entrypoint=f"../src/{name}.py")
    body["runtime"] = {"image": image, "security": {"mode": "restricted"}}
    body["compute"] = {"gpus": 0, **SMALL}
    body["storage"] = {"data_pvc": CLAIM, "output": f"/data/runs/{name}"}
    if options.get("staged"):
        body["storage"]["publish"] = "staged"
    body["metrics"] = {
        "history": ["metrics-history-attempt-0/*.jsonl"],
        "offload": {"enabled": True},
    }
    body["experiment"] = {"project": "e2e", "name": "evidence", "group": "cluster"}
    return body


def state(ws: Workspace, name: str) -> str:
    result = ws.tau("run", "status", name, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["status"]["state"]


def finished(ws: Workspace, name: str) -> str | None:
    current = state(ws, name)
    return current if current in {"succeeded", "failed"} else None


def store_run(data_dir: Path, run_id: str) -> dict[str, Any]:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau.portal",
            "experiment",
            "--store",
            str(data_dir / ".tau" / "expstore"),
            "search",
            "--target",
            run_id,
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    [run] = [r for r in json.loads(result.stdout)["runs"] if r["run_id"] == run_id]
    return run


def submit(ws: Workspace, name: str, body: dict[str, Any]) -> None:
    ws.target(name, body)
    submitted = ws.tau("run", name)
    assert submitted.returncode == 0, submitted.stderr


def test_a_job_with_offload_leaves_its_points_and_state_in_the_workspace_store(
    ws: Workspace, data_dir: Path, local_images
) -> None:
    image = local_images["runtime"].reference
    submit(ws, "offload-job", evidence_job(ws, image, "offload-job", steps=30))
    assert wait_for("the Job to finish", lambda: finished(ws, "offload-job"), 300) == "succeeded"
    run = store_run(data_dir, "offload-job")
    assert run["state"] == "succeeded"
    assert {name: m["count"] for name, m in run["metrics"].items()} == {
        "loss": 30,
        "accuracy": 30,
        "tau/run_status": 1,
    }
    assert run["metrics"]["tau/run_status"]["latest"] == 1.0
    assert run["config_hash"] and run["tau_command"].startswith("tau run")


def evidence_rayjob(ws: Workspace, image: str, name: str, steps: int) -> dict[str, Any]:
    """The same trainer as the Ray job's driver, on a head and one worker of the real node."""
    body = evidence_job(ws, image, name, steps=steps)
    body["engine"] = "rayjob"
    # Ray starts within fixed timeouts: the CPU requests are the pods' share of a busy node;
    # the head's dashboard modules get longer than their default 30 s to come up.
    body["runtime"]["env"] = {"RAY_DASHBOARD_SUBPROCESS_MODULE_WAIT_READY_TIMEOUT": "300"}
    body["compute"] = {
        "workers": 1,
        "gpus_per_worker": 0,
        "head_cpu_request": "600m",
        "head_memory_request": "1Gi",
        "head_cpu_limit": "2",
        "head_memory_limit": "2Gi",
        "cpu_request": "300m",
        "memory_request": "768Mi",
        "cpu_limit": "1",
        "memory_limit": "1536Mi",
    }
    return body


def test_a_rayjob_with_offload_leaves_its_points_and_state_in_the_workspace_store(
    ws: Workspace, data_dir: Path, local_images
) -> None:
    image = local_images["runtime"].reference
    submit(ws, "offload-ray", evidence_rayjob(ws, image, "offload-ray", steps=40))
    assert wait_for("the RayJob to finish", lambda: finished(ws, "offload-ray"), 900) == (
        "succeeded"
    )
    rayjob = ws.get("rayjobs.ray.io", "offload-ray", "-n", ws.namespace)
    assert rayjob["status"]["jobStatus"] == "SUCCEEDED"  # Ray's own verdict on the driver
    run = store_run(data_dir, "offload-ray")
    assert run["state"] == "succeeded"
    assert {name: m["count"] for name, m in run["metrics"].items()} == {
        "loss": 40,
        "accuracy": 40,
        "tau/run_status": 1,
    }
    assert run["metrics"]["tau/run_status"]["latest"] == 1.0
    assert run["config_hash"] and run["tau_command"].startswith("tau run")


def offloader_pids(run: str) -> list[int]:
    """Host pids of the sidecar's offloader for `run` (containerd runs on this machine)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"offload" in argv and b"metrics" in argv and run.encode() in argv:
            found.append(int(entry.name))
    return found


def test_killing_the_offload_container_mid_run_duplicates_no_point(
    ws: Workspace, data_dir: Path, local_images
) -> None:
    image = local_images["runtime"].reference
    steps = 300
    submit(ws, "offload-kill", evidence_job(ws, image, "offload-kill", steps=steps, pause=0.05))
    history = data_dir / "runs" / "offload-kill" / "metrics-history-attempt-0" / "history.jsonl"
    wait_for(
        "the trainer to write", lambda: history.exists() and history.stat().st_size > 2000, 240
    )
    [pid] = wait_for("the offloader process", lambda: offloader_pids("offload-kill"), 60)
    os.kill(pid, signal.SIGKILL)
    wait_for(
        "the kubelet to restart the sidecar",
        lambda: (pids := offloader_pids("offload-kill")) and pids != [pid],
        120,
    )
    assert wait_for("the Job to finish", lambda: finished(ws, "offload-kill"), 300) == "succeeded"
    run = store_run(data_dir, "offload-kill")
    assert run["metrics"]["loss"]["count"] == steps
    assert run["metrics"]["accuracy"]["count"] == steps
    pod = ws.get("pods", "-n", ws.namespace, "-l", "job-name=offload-kill")["items"][0]
    [sidecar] = [
        s for s in pod["status"]["initContainerStatuses"] if s["name"] == "metrics-offload"
    ]
    assert sidecar["restartCount"] >= 1


def test_a_failed_staged_run_publishes_nothing_and_a_successful_one_is_listed(
    ws: Workspace, data_dir: Path, local_images
) -> None:
    image = local_images["runtime"].reference
    submit(ws, "staged-fail", evidence_job(ws, image, "staged-fail", steps=3, staged=True, code=3))
    submit(ws, "staged-ok", evidence_job(ws, image, "staged-ok", steps=3, staged=True))
    assert wait_for("the failing run", lambda: finished(ws, "staged-fail"), 300) == "failed"
    assert wait_for("the good run", lambda: finished(ws, "staged-ok"), 300) == "succeeded"

    assert not (data_dir / "runs" / "staged-fail" / ".tau-artifacts").exists() or not any(
        (data_dir / "runs" / "staged-fail" / ".tau-artifacts").rglob("*")
    )
    refused = ws.tau("run", "get", "staged-fail")
    assert refused.returncode == 1 and "not published yet" in refused.stderr
    assert store_run(data_dir, "staged-fail")["state"] == "failed"

    listed = ws.tau("run", "get", "staged-ok", "-o", "json")
    assert listed.returncode == 0, listed.stderr
    assert ".tau-artifacts/" in json.loads(listed.stdout)["entries"]
    [publication] = (data_dir / "runs" / "staged-ok" / ".tau-artifacts").iterdir()
    raw = ws.tau(
        "run",
        "get",
        "staged-ok",
        "--artifact",
        f".tau-artifacts/{publication.name}/model.txt",
        "-o",
        "raw",
    )
    assert (raw.returncode, raw.stdout) == (0, "weights\n")


def test_sidecar_lag_is_small_enough_to_watch_a_run(ws: Workspace, data_dir: Path, local_images):
    """While a run is going, its points are already in the store (not only at the end)."""
    image = local_images["runtime"].reference
    submit(ws, "offload-live", evidence_job(ws, image, "offload-live", steps=600, pause=0.05))
    seen = wait_for(
        "points in the store while the run is going",
        lambda: (
            (run := _maybe_run(data_dir, "offload-live"))
            and run["metrics"].get("loss", {}).get("count", 0) > 10
            and run["state"] == "running"
            and run
        ),
        240,
    )
    assert seen["lifecycle"] == "running"
    assert wait_for("the Job to finish", lambda: finished(ws, "offload-live"), 300) == "succeeded"


def _maybe_run(data_dir: Path, run_id: str) -> dict[str, Any] | None:
    if not (data_dir / ".tau" / "expstore" / "manifest.json").exists():
        return None
    try:
        return store_run(data_dir, run_id)
    except (AssertionError, ValueError):
        return None

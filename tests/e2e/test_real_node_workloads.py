"""tau-rendered workloads executed on the real node, in a workspace namespace enforcing Pod
Security ``restricted`` (the default): a two-pod torchrun Job meets over its rendezvous
Service, a profiled Job runs its entrypoint under the image's nsys and leaves the report on
its output PVC, and failures are classified by `tau run status` from what the kubelet
reported, as the KWOK outcomes are.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from controller_harness import wait_for
from lifecycle_env import Workspace, job_target, workspace_setup
from real_node import expect_restricted_by_default, hostpath_claim, offer_real_node

from hack.localcluster import BuildError, LocalCluster, nodeimage
from hack.localcluster import fixtures as fx
from tests.unit.render import profiler_tools

SMALL = {"cpu_request": "100m", "memory_request": "64Mi"}
REAL_PROFILE = "e2e.real"
REAL_DDP_PROFILE = "e2e.real.2x"
CLAIM = "profiles"


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    for workspace in workspace_setup(local_cluster, tmp_path_factory.mktemp("real-node")):
        expect_restricted_by_default(workspace)
        offer_real_node(
            workspace,
            {
                REAL_PROFILE: {},
                REAL_DDP_PROFILE: {"workerCount": 2, "placement": "multi-node-nccl"},
            },
        )
        yield workspace


def real_target(
    name: str,
    image: str,
    script: str,
    ws: Workspace,
    profile: str = REAL_PROFILE,
    **compute: str,
) -> dict:
    """A job target on a real-node profile running ``script`` as its entrypoint; restricted
    because the workspace namespace enforces it, not because the target asks."""
    (ws.repo / "src").mkdir(exist_ok=True)
    (ws.repo / "src" / f"{name}.py").write_text(script)
    body = job_target(name, profile=profile, entrypoint=f"../src/{name}.py")
    body["runtime"] = {"image": image}
    body["compute"] = {"gpus": 0, **SMALL, **compute}
    return body


def status(ws: Workspace, name: str) -> dict[str, Any]:
    result = ws.tau("run", "status", name, "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def finished(ws: Workspace, name: str) -> dict[str, Any] | None:
    document = status(ws, name)
    return document if document["status"]["state"] in {"succeeded", "failed"} else None


def pods(ws: Workspace, name: str) -> list[dict[str, Any]]:
    listed = ws.get("pods", "-n", ws.namespace, "-l", f"job-name={name}") or {}
    return listed.get("items") or []


def test_a_two_node_torchrun_job_meets_over_its_rendezvous_service(
    ws: Workspace, torchrun_image: str
) -> None:
    script = (
        "import os, socket\n"
        "print(f\"rank {os.environ['RANK']} of {os.environ['WORLD_SIZE']} on "
        "{socket.gethostname()} master {os.environ['MASTER_ADDR']}\")\n"
    )
    body = real_target("ddp-real", torchrun_image, script, ws, REAL_DDP_PROFILE)
    body["execution"] = {"launcher": "torchrun", "nodes": 2, "processes_per_node": 1}
    ws.target("ddp-real", body)

    submitted = ws.tau("run", "ddp-real")
    assert submitted.returncode == 0, submitted.stderr
    document = wait_for("the torchrun Job to finish", lambda: finished(ws, "ddp-real"), 240)
    logs = {
        p["metadata"]["name"]: ws.kubectl("logs", "-n", ws.namespace, p["metadata"]["name"]).stdout
        for p in pods(ws, "ddp-real")
    }
    assert document["status"]["state"] == "succeeded", (document, logs)

    placed = {p["spec"]["nodeName"] for p in pods(ws, "ddp-real")}
    assert placed == {fx.REAL_NODE}
    [leader] = [text for name, text in logs.items() if name.startswith("ddp-real-0-")]
    [follower] = [text for name, text in logs.items() if name.startswith("ddp-real-1-")]
    # Rank 1 found ddp-real-0.ddp-real-headless through cluster DNS and reached it over TCP;
    # rank 0 saw that connection come from rank 1's pod.
    assert "rendezvous ok: node_rank=1 nnodes=2 master ddp-real-0 at ddp-real-0." in follower
    assert "rendezvous ok: node_rank=0 nnodes=2 peers rank1:ddp-real-1@" in leader
    assert "rank 0 of 2 on ddp-real-0" in leader and "rank 1 of 2 on ddp-real-1" in follower
    assert "master ddp-real-0.ddp-real-headless" in follower


FAST_RETRY = {"max_retries": 1, "backoff_initial": "1s", "backoff_max": "2s"}


def terminated_main(ws: Workspace, name: str) -> dict[str, Any]:
    [pod] = pods(ws, name)
    assert pod["spec"]["nodeName"] == fx.REAL_NODE
    assert pod["status"]["phase"] == "Failed"
    [main] = [c for c in pod["status"]["containerStatuses"] if c["name"] == "main"]
    return main["state"]["terminated"]


def test_a_workload_exiting_3_is_classified_as_the_kwok_fail_outcome_is(
    ws: Workspace, python_image: str
) -> None:
    body = real_target("exit3", python_image, "raise SystemExit(3)\n", ws)
    body["resilience"] = FAST_RETRY
    ws.target("exit3", body)

    # What test_lifecycle_retry asserts for KWOK's `fail` outcome, from a real exit code.
    result = ws.tau("run", "exit3", timeout=300)
    assert result.returncode == 1, result.stderr
    assert (
        f"workload {ws.namespace}/exit3 failed (Unknown) — not in retry_on list "
        "[Preempted, Evicted]"
    ) in result.stderr
    assert "Traceback" not in result.stderr
    terminated = terminated_main(ws, "exit3")
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    watched = ws.tau("run", "status", "exit3", "--watch", "--interval", "1s")
    assert watched.returncode == 1
    assert f"startup phase failed for {ws.namespace}/exit3" in watched.stderr
    assert "[!]  Container start" in watched.stdout
    assert status(ws, "exit3")["status"]["state"] == "failed"


def test_a_workload_over_its_memory_limit_is_oomkilled_as_the_kwok_outcome_is(
    ws: Workspace, python_image: str
) -> None:
    hog = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n"
    body = real_target("oom", python_image, hog, ws, memory_limit="64Mi")
    body["resilience"] = FAST_RETRY
    ws.target("oom", body)

    result = ws.tau("run", "oom", timeout=300)
    assert result.returncode == 1, result.stderr
    assert "failed (OOMKilled) — not in retry_on list [Preempted, Evicted]" in result.stderr
    # The kernel's memory cgroup killed it (cgroup v1, limit written by runc); containerd saw
    # the OOM event and the kubelet reported it.
    terminated = terminated_main(ws, "oom")
    assert (terminated["exitCode"], terminated["reason"]) == (137, "OOMKilled")
    resumed = ws.tau("run", "resume", "oom", "--config", "tau/oom.yaml")
    assert resumed.returncode == 1
    assert 'workload "oom" failed with OOM — the same config will likely OOM again.' in (
        resumed.stderr
    )


@pytest.fixture(scope="module")
def nsys_image(local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``python_image`` with the nsys/ncu stand-ins (tests/unit/render/profiler_tools.py) in
    /usr/local/bin: a workload image that ships its profiler, as the stage requires."""
    bin_dir = tmp_path_factory.mktemp("profiler-bin")
    # The layer keeps the directory's mode as /usr/local/bin's: the pod's user must search it.
    bin_dir.chmod(0o755)
    profiler_tools.install(bin_dir, python="/usr/bin/python3")
    # Tagged by content: the node keeps an image it pulled once under a tag, so a changed
    # stand-in must not reuse one.
    content = hashlib.sha256((bin_dir / "nsys").read_bytes()).hexdigest()[:12]
    tag = f"{nodeimage.python_tag()}-profiler-standin-{content}"
    try:
        base = nodeimage.build_python_layout(nodeimage.cache())
        layout = nodeimage.insert(base, nodeimage.python_tag(), bin_dir, "/usr/local/bin", tag)
    except BuildError as error:
        pytest.fail(f"the profiler stand-in image could not be built: {error}", pytrace=False)
    try:
        return local_cluster.push_image(layout, tag, nodeimage.PYTHON_REPOSITORY)
    finally:
        shutil.rmtree(layout.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def profiles_dir(ws: Workspace, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output PVC, a hostPath volume this test reads directly."""
    root = tmp_path_factory.mktemp("profiles")
    hostpath_claim(ws, CLAIM, root)
    return root


PROFILED = """\
import os
print(f"training under {os.environ.get('PROFILED_BY', 'no profiler')}", flush=True)
"""


def test_a_profiled_job_runs_rank_0_under_nsys_and_keeps_the_report_on_its_output_pvc(
    ws: Workspace, nsys_image: str, profiles_dir: Path
) -> None:
    output = "/data/runs/profiled"
    body = real_target("profiled", nsys_image, PROFILED, ws)
    body["runtime"]["env"] = {profiler_tools.LOG_ENV: f"{output}/nsys-calls.log"}
    body["storage"] = {"data_pvc": CLAIM, "output": output}
    body["profiler"] = {"mode": "nsys", "rank": 0, "warmup": "1s", "duration": "1m"}
    ws.target("profiled", body)

    submitted = ws.tau("run", "profiled")
    assert submitted.returncode == 0, submitted.stderr
    assert f"profile artifacts: stored under {output}/profile on PVC {CLAIM}" in submitted.stdout
    document = wait_for("the profiled Job to finish", lambda: finished(ws, "profiled"), 240)
    [pod] = pods(ws, "profiled")
    log = ws.kubectl("logs", "-n", ws.namespace, pod["metadata"]["name"]).stdout
    assert document["status"]["state"] == "succeeded", (document, log)
    assert pod["spec"]["nodeName"] == fx.REAL_NODE

    job = ws.get("job", "profiled", "-n", ws.namespace) or {}
    annotations = job["metadata"]["annotations"]
    declared = annotations["tau.azure.com/profile-path"]
    assert (declared, annotations["tau.azure.com/profile-pvc"]) == (f"{output}/profile", CLAIM)
    # The entrypoint ran as nsys's child (the stand-in marks its env), the stage said where
    # the report goes, and the report is on the PVC at the declared path.
    assert "training under nsys" in log, log
    assert f"tau profiler: rank 0 runs under nsys; report {declared}/rank-0.nsys-rep" in log
    on_pvc = profiles_dir / "runs" / "profiled"
    assert (on_pvc / "profile" / "rank-0.nsys-rep").read_text().startswith("report of ")
    [main] = job["spec"]["template"]["spec"]["containers"]
    [call] = profiler_tools.calls(on_pvc / "nsys-calls.log")
    assert call == {
        "tool": "nsys",
        "argv": [
            "profile",
            "--force-overwrite=true",
            f"--output={declared}/rank-0",
            "--delay=1",
            "--duration=60",
            # The Job's own entrypoint command, after `sh -c <profiler stage> tau-profiler`.
            *main["command"][4:],
        ],
    }


def test_a_profiled_job_whose_image_lacks_nsys_fails_with_one_line_and_exit_127(
    ws: Workspace, python_image: str, profiles_dir: Path
) -> None:
    body = real_target("no-nsys", python_image, PROFILED, ws)
    body["storage"] = {"data_pvc": CLAIM, "output": "/data/runs/no-nsys"}
    body["profiler"] = {"mode": "nsys"}
    ws.target("no-nsys", body)

    submitted = ws.tau("run", "no-nsys")
    assert submitted.returncode == 0, submitted.stderr
    document = wait_for("the profiled Job to finish", lambda: finished(ws, "no-nsys"), 240)
    assert document["status"]["state"] == "failed", document
    assert terminated_main(ws, "no-nsys")["exitCode"] == 127
    [pod] = pods(ws, "no-nsys")
    log = ws.kubectl("logs", "-n", ws.namespace, pod["metadata"]["name"]).stdout
    # The entrypoint never started: the whole log is the stage's one line naming the fix.
    assert log.splitlines() == [
        "tau profiler: profiler.mode nsys needs nsys on PATH in the workload image; "
        "install it there or remove profiler"
    ]
    assert not (profiles_dir / "runs" / "no-nsys" / "profile").exists()

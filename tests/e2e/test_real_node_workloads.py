"""tau-rendered workloads executed on the real node, in a workspace namespace enforcing Pod
Security ``restricted`` (the default): a two-pod torchrun Job meets over its rendezvous
Service, and failures are classified by `tau run status` from what the kubelet reported, as
the KWOK outcomes are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from controller_harness import wait_for
from lifecycle_env import Workspace, job_target, workspace_setup
from real_node import expect_restricted_by_default, offer_real_node

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

SMALL = {"cpu_request": "100m", "memory_request": "64Mi"}
REAL_PROFILE = "e2e.real"
REAL_DDP_PROFILE = "e2e.real.2x"


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

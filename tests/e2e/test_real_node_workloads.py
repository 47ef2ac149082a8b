"""tau-rendered workloads executed on the real node, in a namespace enforcing Pod Security
``restricted``: a two-pod torchrun Job meets over its rendezvous Service, and failures are
classified by `tau run status` from what the kubelet reported, as the KWOK outcomes are.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from controller_harness import wait_for
from lifecycle_env import Workspace, job_target, workspace_setup
from real_node import enforce_restricted

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

SMALL = {"cpu_request": "100m", "memory_request": "64Mi"}


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    for workspace in workspace_setup(local_cluster, tmp_path_factory.mktemp("real-node")):
        enforce_restricted(local_cluster, workspace.namespace)
        yield workspace


def real_target(name: str, image: str, script: str, ws: Workspace, **compute: str) -> dict:
    """A job target pinned to the real node, restricted, running ``script`` as its entrypoint."""
    (ws.repo / "src").mkdir(exist_ok=True)
    (ws.repo / "src" / f"{name}.py").write_text(script)
    body = job_target(name, entrypoint=f"../src/{name}.py")
    body["runtime"] = {"image": image, "security": {"mode": "restricted"}}
    body["compute"] = {"gpus": 0, **SMALL, **compute}
    body["policy"]["node_selector"] = dict(fx.REAL_NODE_SELECTOR)
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
    body = real_target("ddp-real", torchrun_image, script, ws)
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


def test_a_workload_exiting_3_is_failed_with_its_exit_code(
    ws: Workspace, python_image: str
) -> None:
    ws.target("exit3", real_target("exit3", python_image, "raise SystemExit(3)\n", ws))
    submitted = ws.tau("run", "exit3")
    assert submitted.returncode == 0, submitted.stderr

    document = wait_for("the exit-3 Job to fail", lambda: finished(ws, "exit3"), 240)
    assert document["status"]["state"] == "failed", document
    [pod] = pods(ws, "exit3")
    assert pod["spec"]["nodeName"] == fx.REAL_NODE
    [main] = [c for c in pod["status"]["containerStatuses"] if c["name"] == "main"]
    terminated = main["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (3, "Error")
    assert pod["status"]["phase"] == "Failed"


def test_a_workload_over_its_memory_limit_is_oomkilled(ws: Workspace, python_image: str) -> None:
    hog = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n"
    body = real_target("oom", python_image, hog, ws, memory_limit="64Mi")
    ws.target("oom", body)
    submitted = ws.tau("run", "oom")
    assert submitted.returncode == 0, submitted.stderr

    document = wait_for("the memory hog to fail", lambda: finished(ws, "oom"), 240)
    assert document["status"]["state"] == "failed", document
    [pod] = pods(ws, "oom")
    assert pod["spec"]["nodeName"] == fx.REAL_NODE
    [main] = [c for c in pod["status"]["containerStatuses"] if c["name"] == "main"]
    terminated = main["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (137, "OOMKilled")

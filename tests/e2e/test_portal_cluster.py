"""The Portal as a process with the chart's RBAC against the local control plane: its boards
show real Kueue decisions, its run page is `tau run status`, its OpenAPI survives
Schemathesis, its ServiceAccount reads nothing outside its scope, and the lifecycle recorder
records each transition once across a restart.
"""

from __future__ import annotations

import subprocess
import time
from typing import Any

from controller_harness import wait_for
from portal_env import BIN, Scene, can_i, scene, start_recorder, tau_job

from hack.localcluster import fixtures as fx
from tau.evidence import lifecycle

__all__ = ["scene"]  # the module-scoped fixture, one Portal for this module


def _run(scene: Scene, name: str) -> dict[str, Any] | None:
    rows = scene.portal.json(f"/api/portal/runs?workspace={scene.workspace}&q={name}")["runs"]
    return next((r for r in rows if r["name"] == name), None)


def test_a_finished_run_is_on_the_runs_board_and_its_page_is_tau_run_status(scene: Scene) -> None:
    scene.cluster.apply([tau_job("portal-ok", scene.namespace)])
    row = wait_for(
        "the run Complete on the Runs board",
        lambda: (r := _run(scene, "portal-ok")) and r["status"] == "Complete" and r,
        timeout=90,
    )
    assert row["queue"] == "jobqueue" and row["owner"] == "vision"
    assert row["namespace"] == scene.namespace and row["source"] == "tau"

    page = scene.portal.json(f"/api/portal/runs/{scene.namespace}/portal-ok")
    cli = scene.status("portal-ok")
    assert page["phases"] == cli["phases"]
    assert page["status"] == cli["status"]
    assert [p["name"] for p in page["pods"]] == [p["name"] for p in cli["pods"]]
    assert page["experiment"]["url"].startswith("/stellar?target=portal-ok")
    logs = scene.portal.json(f"/api/portal/runs/{scene.namespace}/portal-ok/logs?tail=5")
    assert logs["streams"] and logs["streams"][0]["lines"] == [fx.DEFAULT_POD_LOG_LINE]


def test_an_over_quota_run_shows_kueue_s_reason_and_its_queue_position(scene: Scene) -> None:
    scene.cluster.apply([tau_job("too-big-1", scene.namespace, gpus=64)])

    def first_workload() -> bool:
        listed = scene.cluster.kubectl(
            "get", "workloads", "-n", scene.namespace, "-o", "name", check=False
        ).stdout
        return "too-big-1" in listed

    wait_for("too-big-1's Workload", first_workload, timeout=60)
    # Kueue ranks equal priorities by Workload creation time, which has one-second resolution:
    # "the older waits in front" needs the two to be created in different seconds.
    time.sleep(1.5)
    scene.cluster.apply([tau_job("too-big-2", scene.namespace, gpus=64)])

    def pending() -> list[dict[str, Any]] | None:
        board = scene.portal.json("/api/portal/jobs")
        queues = [q for q in board["clusterQueues"] if q["name"] == fx.CLUSTER_QUEUE]
        rows = [w for q in queues for w in q["pending"] if w["namespace"] == scene.namespace]
        ranked = all(r["reason"] and r["positionSource"] == "kueue-visibility" for r in rows)
        return rows if len(rows) == 2 and ranked else None

    rows = wait_for(
        "both workloads pending with a reason and a position from Kueue's visibility API",
        pending,
        timeout=90,
    )
    assert all("insufficient quota for nvidia.com/gpu" in r["reason"] for r in rows)
    owners = [r["owner"]["name"] for r in sorted(rows, key=lambda r: r["positionInLocalQueue"])]
    assert owners == ["too-big-1", "too-big-2"], "same priority: the older waits in front"
    board = scene.portal.json("/api/portal/jobs")
    assert board["visibility"]["served"] is True, board["visibility"]
    assert {r["positionSource"] for r in rows} == {"kueue-visibility"}, "Kueue's own positions"
    [cq] = [q for q in board["clusterQueues"] if q["name"] == fx.CLUSTER_QUEUE]
    gpu = [f for f in cq["flavors"] if f["resource"] == fx.GPU_RESOURCE and f["nominal"] != "0"]
    assert gpu, "nominal GPU quota per flavor is shown"

    page = scene.portal.json(f"/api/portal/runs/{scene.namespace}/too-big-1")
    admission = next(p for p in page["phases"] if p["name"] == "Kueue admission")
    assert admission["status"] == "active" and "insufficient quota" in admission["detail"]
    assert page["phases"] == scene.status("too-big-1")["phases"]


def test_the_nodes_board_lists_the_gpu_nodes_with_their_placement_labels(scene: Scene) -> None:
    board = scene.portal.json("/api/portal/nodes")
    names = {n["name"]: n for n in board["nodes"]}
    h200 = names[fx.H200_POOL.node_names[0]]
    assert h200["gpuCapacity"] == fx.H200_POOL.gpus
    assert h200["placementLabels"][fx.GPU_CLASS_LABEL] == fx.GPU_CLASS_H200
    assert fx.CPU_POOL.node_names[0] not in names, "GPU nodes only by default"


def test_the_portal_service_account_reads_nothing_outside_its_scope(scene: Scene) -> None:
    kubeconfig, ns = scene.portal.kubeconfig, scene.namespace
    assert can_i(kubeconfig, scene.cluster, "list", "jobs", "-n", ns)
    assert can_i(kubeconfig, scene.cluster, "get", "pods", "--subresource=log", "-n", ns)
    for args in (
        ("get", "secrets", "-n", ns),
        ("list", "secrets", "-n", scene.portal.release_namespace),
        ("list", "secrets", "--all-namespaces"),
        ("list", "jobs", "-n", "kube-system"),
        ("list", "pods", "--all-namespaces"),
        ("create", "jobs", "-n", ns),
        ("delete", "pods", "-n", ns),
    ):
        assert not can_i(kubeconfig, scene.cluster, *args), args
    outside = scene.portal.get("/api/portal/runs/kube-system/anything")
    assert outside.status_code == 404
    other = scene.portal.get("/api/portal/runs?workspace=someone-else")
    assert other.status_code == 400


def test_the_shared_stellar_link_and_experiments_board_read_the_workspace_store(
    scene: Scene,
) -> None:
    board = scene.portal.json(f"/api/portal/experiments?workspace={scene.workspace}")
    [demo] = [e for e in board["experiments"] if e["experiment_id"] == "portal-demo"]
    page = scene.portal.get(demo["stellarUrl"])
    assert page.status_code == 200 and "Stellar" in page.text
    assert "workspace=shared-research" in demo["stellarUrl"]


def test_schemathesis_finds_no_server_error_in_the_portal_openapi(scene: Scene) -> None:
    done = subprocess.run(
        [
            str(BIN / "schemathesis"),
            "run",
            f"{scene.portal.url}/openapi.json",
            "--checks",
            "not_a_server_error",
            "--max-examples",
            "30",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=540,
        cwd=scene.tmp,  # its example cache stays out of the checkout
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_the_recorder_writes_each_transition_once_across_a_restart(scene: Scene) -> None:
    release = scene.portal.release_namespace
    first = start_recorder(
        scene.cluster,
        scene.tmp,
        release_namespace=release,
        target_namespace=scene.namespace,
        store=scene.store,
        workspace=scene.workspace,
        name="recorder-1",
    )
    try:
        scene.cluster.apply([tau_job("recorded", scene.namespace)])

        def states() -> list[str]:
            return [
                r["state"]
                for r in lifecycle.rows(scene.store)
                if r["owning_resource_name"] == "recorded"
            ]

        wait_for("the run recorded succeeded", lambda: "succeeded" in states(), timeout=90)
    finally:
        first.stop()
    before = states()
    assert before[0] == "submitted" and before[-1] == "succeeded"
    second = start_recorder(
        scene.cluster,
        scene.tmp,
        release_namespace=release,
        target_namespace=scene.namespace,
        store=scene.store,
        workspace=scene.workspace,
        name="recorder-2",
    )
    try:
        wait_for(
            "the restarted recorder's first pass",
            lambda: (
                "recorded" in (scene.tmp / "recorder-2.log").read_text()
                or "recording" in (scene.tmp / "recorder-2.log").read_text()
            ),
            timeout=60,
        )
        scene.cluster.kubectl("delete", "job", "recorded", "-n", scene.namespace)
        too_big = [
            r for r in lifecycle.rows(scene.store) if r["owning_resource_name"] == "too-big-1"
        ]
        assert too_big, "the run waiting for quota is recorded too"
        wait_for(
            "the Runs board keeps the deleted run from history",
            lambda: (r := _run(scene, "recorded")) and r["historyOnly"] and r,
            timeout=60,
        )
    finally:
        second.stop()
    after = states()
    assert after == before, f"no transition repeated across the restart: {after}"
    assert len(after) == len(set(after)), after
    board = scene.portal.json(f"/api/portal/runs?workspace={scene.workspace}")
    assert board["historyState"] == "available"

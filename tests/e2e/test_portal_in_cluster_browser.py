"""The Portal pod from our image, opened in headless Chromium the way an operator reaches it.

`tau cluster install --chart charts/taugrid` runs the Portal (this checkout's image, by
digest, from the cluster registry) on the real kubelet node with its documented values
(cluster, workspace, workloadNamespace, jobs.scopeMode workspace, kueueviz.enabled) and the
chart's own ServiceAccount and RBAC; the controller and the baseline queue are left to the local
cluster, so this release owns no cluster-wide object another test could fight over.
Chromium reaches the pod through `kubectl port-forward service/tau-portal PORT:80`, the
operator diagnostic the Configure Portal guide names. Screenshots of every board are kept in
the session's `artifacts/portal-in-cluster-screenshots` temporary directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from controller_harness import get, unique
from portal_boards import finished_and_over_quota, open_board, screenshot_folder
from portal_env import PortalServer, Process, Scene, free_port, spawn

from hack.images import ImageRef
from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from browser.conftest import Page, browser, page

__all__ = ["Page", "browser", "page"]

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "taugrid"
WORKSPACE = "shared-research"


def portal_values(
    cluster: LocalCluster, images: dict[str, ImageRef], workload_namespace: str
) -> dict[str, Any]:
    return {
        "global": {"imageRegistry": cluster.registry},
        "components": {
            "kueue": {"enabled": False},
            "kuberayOperator": {"enabled": False},
            "tauCoreController": {"enabled": False},
        },
        "baselineQueue": {"enabled": False},
        "taugrid-core": {
            "portal": {
                "image": {"digest": images["portal"].digest},
                "cluster": "local",
                "workspace": WORKSPACE,
                "workloadNamespace": workload_namespace,
                "jobs": {"scopeMode": "workspace"},
                "kueueviz": {"enabled": True},
                "nodeSelector": dict(fx.REAL_NODE_SELECTOR),
                "tolerations": [dict(fx.REAL_NODE_TOLERATION)],
            }
        },
    }


def port_forward(cluster: LocalCluster, namespace: str, log: Path) -> tuple[str, Process]:
    """`kubectl port-forward service/tau-portal PORT:80`, retried until /healthz answers (a
    forward started while the pod's endpoint is still settling exits at once)."""
    deadline = time.monotonic() + 120
    while True:
        port = free_port()
        forward = spawn(
            [
                str(cluster.bin_dir / "kubectl"),
                "--kubeconfig",
                str(cluster.kubeconfig),
                "-n",
                namespace,
                "port-forward",
                "service/tau-portal",
                f"{port}:80",
            ],
            log,
        )
        url = f"http://127.0.0.1:{port}"
        while forward.process.poll() is None and time.monotonic() < deadline:
            try:
                if httpx.get(url + "/healthz", timeout=5).json() == {"status": "ok"}:
                    return url, forward
            except (httpx.TransportError, ValueError):
                pass
            time.sleep(0.5)
        forward.stop()
        if time.monotonic() >= deadline:
            raise AssertionError(f"port-forward to service/tau-portal failed: {forward.output()}")


@pytest.fixture(scope="module")
def scene(
    local_cluster: LocalCluster,
    local_images: dict[str, ImageRef],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Scene]:
    tmp = tmp_path_factory.mktemp("portal-in-cluster")
    workload, system, release = unique("e2e-pic"), unique("e2e-pic-sys"), unique("pic")
    local_cluster.kubectl("create", "namespace", workload)
    local_cluster.apply(
        [
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "jobqueue", "namespace": workload},
                "spec": {"clusterQueue": fx.CLUSTER_QUEUE},
            }
        ]
    )
    values = tmp / "values.yaml"
    values.write_text(yaml.safe_dump(portal_values(local_cluster, local_images, workload)))
    path = os.pathsep.join([str(local_cluster.bin_dir), os.environ["PATH"]])
    env = {**os.environ, "KUBECONFIG": str(local_cluster.kubeconfig), "PATH": path}
    env["TAU_CONFIG_DIR"] = str(tmp / "tau-config")

    def tau(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tau", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            env=env,
            stdin=subprocess.DEVNULL,
        )

    scope = ["--release", release, "--namespace", system]
    forward: Process | None = None
    try:
        done = tau(
            "cluster", "install", "--chart", str(CHART), *scope, "-f", str(values),
            "--timeout", "8m",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr + done.stdout
        rollout = local_cluster.kubectl(
            "-n", system, "rollout", "status", "deployment/tau-portal", "--timeout=180s",
            check=False,
        )  # fmt: skip
        assert rollout.returncode == 0, rollout.stderr
        url, forward = port_forward(local_cluster, system, tmp / "port-forward.log")
        server = PortalServer(url, local_cluster.kubeconfig, forward, system)
        yield Scene(local_cluster, workload, WORKSPACE, tmp / "no-local-store", server, tmp)
    finally:
        if forward is not None:
            forward.stop()
        tau("cluster", "uninstall", "--chart", str(CHART), *scope, "--yes")
        local_cluster.kubectl("delete", "namespace", workload, system, "--wait=false", check=False)


@pytest.fixture(scope="module")
def runs(scene: Scene) -> Scene:
    return finished_and_over_quota(scene, "pod-ok", "pod-big", timeout=120)


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return screenshot_folder(tmp_path_factory, "portal-in-cluster-screenshots")


def test_the_portal_is_the_chart_pod_from_our_image_on_the_real_node(
    scene: Scene, local_images: dict[str, ImageRef]
) -> None:
    listed = get(
        scene.cluster,
        "pods",
        "-n",
        scene.portal.release_namespace,
        "-l",
        "app.kubernetes.io/name=tau-portal",
    )
    [pod] = (listed or {}).get("items") or []
    assert pod["spec"]["nodeName"] == fx.REAL_NODE
    assert pod["spec"]["serviceAccountName"] == "tau-portal"
    [status] = pod["status"]["containerStatuses"]
    assert status["ready"] and status["imageID"].endswith(local_images["portal"].digest)
    service = get(scene.cluster, "service", "tau-portal", "-n", scene.portal.release_namespace)
    assert (service or {})["spec"]["type"] == "ClusterIP"
    assert scene.portal.json("/api/portal/workspaces")["workspaces"][0]["workspace"] == WORKSPACE


def test_the_runs_board_lists_the_workspace_runs(runs: Scene, page: Page, shots: Path) -> None:
    loaded = open_board(page, runs, "/portal/runs", shots, "runs")
    table = loaded.locator("#runs").inner_text()
    assert "pod-ok" in table and "pod-big" in table
    # No recorder shares a store with this Portal: the board says it shows live objects only.
    assert loaded.locator("#history-state").get_attribute("data-state") == "live-only"
    loaded.fill("#filter-q", "pod-big")
    loaded.press("#filter-q", "Enter")
    loaded.wait_for_selector("body[data-ready=true]")
    assert loaded.locator("#runs tbody tr").count() == 1


def test_the_run_page_shows_the_phase_tree_of_tau_run_status(
    runs: Scene, page: Page, shots: Path
) -> None:
    loaded = open_board(page, runs, f"/portal/runs/{runs.namespace}/pod-ok", shots, "run-detail")
    shown = [
        (li.get_attribute("data-phase"), li.get_attribute("data-status"))
        for li in loaded.locator("#phases li").all()
    ]
    cli = [(p["name"], p["status"]) for p in runs.status("pod-ok")["phases"]]
    assert shown == cli
    loaded.wait_for_selector("#logs pre")
    assert fx.DEFAULT_POD_LOG_LINE in loaded.locator("#logs").inner_text()


def test_an_over_quota_run_shows_its_reason_and_queue_position(
    runs: Scene, page: Page, shots: Path
) -> None:
    loaded = open_board(page, runs, "/portal/jobs", shots, "jobs-queue")
    pending = loaded.locator(f"#pending-{fx.CLUSTER_QUEUE}").inner_text()
    row = next(line for line in pending.splitlines() if "pod-big" in line)
    assert "insufficient quota for nvidia.com/gpu" in row
    assert row.split("\t")[0].strip().isdigit(), f"a position leads the row: {row!r}"
    assert loaded.locator("#visibility").get_attribute("data-served") == "true"
    detail = open_board(page, runs, f"/portal/runs/{runs.namespace}/pod-big", shots, "over-quota")
    admission = detail.locator('#phases li[data-phase="Kueue admission"]')
    assert admission.get_attribute("data-status") == "active"
    assert "insufficient quota" in admission.inner_text()
    cli = {p["name"]: p["status"] for p in runs.status("pod-big")["phases"]}
    assert cli["Kueue admission"] == "active"


def test_the_nodes_board_shows_gpu_nodes_and_health(runs: Scene, page: Page, shots: Path) -> None:
    loaded = open_board(page, runs, "/portal/nodes", shots, "nodes")
    table = loaded.locator("#nodes").inner_text()
    assert fx.H200_POOL.node_names[0] in table and fx.GPU_CLASS_H200 in table
    assert int(loaded.locator("#gpu-nodes").inner_text()) >= fx.H200_POOL.count


def test_the_experiments_board_shows_the_pods_store(runs: Scene, page: Page, shots: Path) -> None:
    # The chart's init container creates the store with its `taugrid` experiment.
    loaded = open_board(page, runs, "/portal/experiments", shots, "experiments")
    assert "taugrid" in loaded.locator("#experiments").inner_text()
    link = loaded.locator("#experiments a").first.get_attribute("href")
    assert f"workspace={WORKSPACE}" in link


def _kueueviz(page: Page, scene: Scene, path: str, shots: Path, name: str, shown: str) -> Any:
    """A KueueViz page served by the Portal, once `shown` is on it (the app fills its tables
    from the Portal's WebSockets after the first paint)."""
    page.page.goto(scene.portal.url + "/kueueviz" + path)
    page.page.get_by_text(shown, exact=True).first.wait_for(timeout=15_000)
    page.page.screenshot(path=str(shots / f"kueueviz-{name}.png"), full_page=True)
    assert page.errors == [], page.errors
    return page.page


def test_kueueviz_shows_the_cluster_queue_and_the_pending_workload(
    runs: Scene, page: Page, shots: Path
) -> None:
    jobs = runs.portal.json("/api/portal/jobs")
    [waiting] = [
        w for q in jobs["clusterQueues"] for w in q["pending"] if w["owner"]["name"] == "pod-big"
    ]
    workload = waiting["name"]
    queues = _kueueviz(page, runs, "/cluster-queues", shots, "cluster-queues", fx.CLUSTER_QUEUE)
    row = queues.locator("tr", has=queues.get_by_role("link", name=fx.CLUSTER_QUEUE, exact=True))
    # Name, cohort, flavors, then Kueue's admitted and pending counts (other suites share the
    # queue, so only "pod-big is among the pending" is fixed).
    cells = row.locator("td").all_inner_texts()
    assert cells[3].isdigit() and int(cells[4]) >= 1, cells

    listed = _kueueviz(page, runs, "/workloads", shots, "workloads", workload)
    assert runs.namespace in listed.locator("table").inner_text()
    dashboard = _kueueviz(page, runs, "/", shots, "dashboard", workload)
    line = dashboard.locator("tr", has=dashboard.get_by_role("link", name=workload)).inner_text()
    assert "Not admitted" in line, line

    detail = _kueueviz(
        page, runs, f"/workload/{runs.namespace}/{workload}", shots, "workload", fx.CLUSTER_QUEUE
    )
    assert f"Workload Detail: {runs.namespace}/{workload}" in detail.inner_text("body")
    # Client-side navigation: the link leads to the ClusterQueue page under the same base.
    detail.get_by_role("link", name=fx.CLUSTER_QUEUE, exact=True).last.click()
    detail.get_by_text(f"Cluster Queue Detail: {fx.CLUSTER_QUEUE}").wait_for(timeout=15_000)
    assert detail.url == f"{runs.portal.url}/kueueviz/cluster-queue/{fx.CLUSTER_QUEUE}"
    assert page.errors == [], page.errors

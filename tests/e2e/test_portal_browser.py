"""Every Portal board in headless Chromium, over real objects of the local control plane.

The Portal runs as a process with the chart's RBAC (see portal_env); Chromium is the one of
tests/browser (its conftest's fixtures are reused). Screenshots of every board are kept in
the session's `artifacts/portal-screenshots` temporary directory.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from portal_boards import finished_and_over_quota, open_board, screenshot_folder
from portal_env import Scene, scene

from hack.localcluster import fixtures as fx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from browser.conftest import Page, browser, page

__all__ = ["Page", "browser", "page", "scene"]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return screenshot_folder(tmp_path_factory, "portal-screenshots")


@pytest.fixture(scope="module")
def runs(scene: Scene) -> Scene:
    return finished_and_over_quota(scene, "browser-ok", "browser-big", timeout=90)


def test_the_runs_board_lists_the_workspace_runs(runs: Scene, page: Page, shots: Path) -> None:
    loaded = open_board(page, runs, "/portal/runs", shots, "runs")
    table = loaded.locator("#runs").inner_text()
    assert "browser-ok" in table and "browser-big" in table
    assert loaded.locator("#history-state").get_attribute("data-state") == "available"
    loaded.fill("#filter-q", "browser-big")
    loaded.press("#filter-q", "Enter")
    loaded.wait_for_selector("body[data-ready=true]")
    assert loaded.locator("#runs tbody tr").count() == 1


def test_the_run_page_shows_the_phase_tree_of_tau_run_status(
    runs: Scene, page: Page, shots: Path
) -> None:
    loaded = open_board(
        page, runs, f"/portal/runs/{runs.namespace}/browser-ok", shots, "run-detail"
    )
    shown = [
        (li.get_attribute("data-phase"), li.get_attribute("data-status"))
        for li in loaded.locator("#phases li").all()
    ]
    cli = [(p["name"], p["status"]) for p in runs.status("browser-ok")["phases"]]
    assert shown == cli
    loaded.wait_for_selector("#logs pre")
    assert fx.DEFAULT_POD_LOG_LINE in loaded.locator("#logs").inner_text()
    href = loaded.locator("#open-experiments").get_attribute("href")
    assert href.startswith("/stellar?target=browser-ok")


def test_an_over_quota_run_shows_its_reason_and_queue_position(
    runs: Scene, page: Page, shots: Path
) -> None:
    loaded = open_board(page, runs, "/portal/jobs", shots, "jobs-queue")
    pending = loaded.locator(f"#pending-{fx.CLUSTER_QUEUE}").inner_text()
    row = next(
        line for line in pending.splitlines() if "browser-big" in line or "job-browser-big" in line
    )
    assert "insufficient quota for nvidia.com/gpu" in row
    assert row.split("\t")[0].strip().isdigit(), f"a position leads the row: {row!r}"
    assert loaded.locator("#visibility").get_attribute("data-served") == "true"
    page_two = open_board(
        page, runs, f"/portal/runs/{runs.namespace}/browser-big", shots, "over-quota"
    )
    admission = page_two.locator('#phases li[data-phase="Kueue admission"]')
    assert admission.get_attribute("data-status") == "active"
    assert "insufficient quota" in admission.inner_text()


def test_the_nodes_board_shows_gpu_nodes_and_health(runs: Scene, page: Page, shots: Path) -> None:
    loaded = open_board(page, runs, "/portal/nodes", shots, "nodes")
    table = loaded.locator("#nodes").inner_text()
    assert fx.H200_POOL.node_names[0] in table and fx.GPU_CLASS_H200 in table
    assert int(loaded.locator("#gpu-nodes").inner_text()) >= fx.H200_POOL.count


def test_the_experiments_board_links_to_stellar(runs: Scene, page: Page, shots: Path) -> None:
    loaded = open_board(page, runs, "/portal/experiments", shots, "experiments")
    assert "portal-demo" in loaded.locator("#experiments").inner_text()
    link = loaded.locator("#experiments a").first.get_attribute("href")
    assert "workspace=shared-research" in link

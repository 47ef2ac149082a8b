"""What both Portal browser suites do around their pages: a finished and an over-quota run to
show, opening a board with no error and no console error, and a screenshot of each board kept
under the session's ``artifacts/`` directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from controller_harness import wait_for
from portal_env import Scene, tau_job


def screenshot_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    folder = tmp_path_factory.getbasetemp() / "artifacts" / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def finished_and_over_quota(scene: Scene, finished: str, over_quota: str, timeout: float) -> Scene:
    """Submit a run that completes and one asking for more GPUs than the queue has, and wait
    until the Portal sees the first complete and the second pending with Kueue's position."""
    scene.cluster.apply(
        [tau_job(finished, scene.namespace), tau_job(over_quota, scene.namespace, gpus=64)]
    )

    def settled() -> bool:
        rows = {r["name"]: r for r in scene.portal.json("/api/portal/runs")["runs"]}
        jobs = scene.portal.json("/api/portal/jobs")
        waiting = [w for q in jobs["clusterQueues"] for w in q["pending"] if w["reason"]]
        return rows.get(finished, {}).get("status") == "Complete" and any(
            w["owner"]["name"] == over_quota and w["positionSource"] == "kueue-visibility"
            for w in waiting
        )

    wait_for(
        f"{finished} finished and {over_quota} over quota, seen by the Portal", settled, timeout
    )
    return scene


def open_board(page: Any, scene: Scene, path: str, shots: Path, name: str) -> Any:
    loaded = page.open(scene.portal.url + path)
    assert loaded.locator("#error").count() == 0, loaded.locator("#error").inner_text()
    loaded.screenshot(path=str(shots / f"{name}.png"), full_page=True)
    assert page.errors == []
    return loaded

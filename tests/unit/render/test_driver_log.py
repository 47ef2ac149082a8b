"""The Ray driver's output reaches the head's driver-log container: the entrypoint's tee and
the sidecar's follower, run in a real /bin/sh (the shell Ray starts entrypoints with)."""

from __future__ import annotations

import shlex
import signal
import subprocess
import time
from pathlib import Path

from tau import keys
from tau.render import driver_log
from tau.render.rayjob import render_rayjob

from . import intents

DRIVER = "echo started; echo oops >&2; python3 -c 'print(\"from python\")'; exit 3"


def entrypoint(directory: Path, command: str) -> str:
    preamble = driver_log.PREAMBLE.replace(driver_log.PATH, str(directory))
    return f"set -eu\n{preamble}\nexec sh -c {shlex.quote(command)}\n"


def follower(directory: Path) -> list[str]:
    [rayjob] = render_rayjob(intents.rayjob_2x8())
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    [command] = [c["command"] for c in head["containers"] if c["name"] == keys.DRIVER_LOG_CONTAINER]
    return [part.replace(driver_log.PATH, str(directory)) for part in command]


def test_the_entrypoint_keeps_its_output_and_exit_code_and_copies_both_streams_to_the_file(
    tmp_path: Path,
) -> None:
    run = subprocess.run(
        ["/bin/sh", "-c", entrypoint(tmp_path, DRIVER)], capture_output=True, text=True
    )
    assert run.returncode == 3
    assert run.stdout.splitlines() == ["started", "oops", "from python"]
    log = (tmp_path / "driver.log").read_text().splitlines()
    assert log == ["started", "oops", "from python"]
    assert [p.name for p in tmp_path.iterdir()] == ["driver.log"]  # the pipe is gone


def test_without_the_volume_the_entrypoint_runs_as_before(tmp_path: Path) -> None:
    missing = tmp_path / "absent"
    run = subprocess.run(
        ["/bin/sh", "-c", entrypoint(missing, DRIVER)], capture_output=True, text=True
    )
    assert run.returncode == 3
    assert run.stdout.splitlines() == ["started", "from python"]
    assert run.stderr.splitlines() == ["oops"]
    assert not missing.exists()


def test_the_sidecar_prints_the_file_from_its_first_line_and_stops_at_once_on_sigterm(
    tmp_path: Path,
) -> None:
    sidecar = subprocess.Popen(follower(tmp_path), stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)  # started before the driver wrote anything
        (tmp_path / "driver.log").write_text("first\n")
        with (tmp_path / "driver.log").open("a") as log:
            log.write("tau kind ray smoke complete\n")
        assert sidecar.stdout is not None
        assert sidecar.stdout.readline() == "first\n"
        assert sidecar.stdout.readline() == "tau kind ray smoke complete\n"
        sidecar.send_signal(signal.SIGTERM)
        assert sidecar.wait(timeout=5) == 0
    finally:
        sidecar.kill()


def test_the_head_pod_runs_the_sidecar_beside_ray_on_the_shared_volume() -> None:
    [rayjob] = render_rayjob(intents.rayjob_2x8())
    head = rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
    ray, sidecar = head["containers"][0], head["containers"][-1]
    assert ray["name"] == "ray-head"  # KubeRay injects `ray start` into the first container
    assert sidecar["name"] == keys.DRIVER_LOG_CONTAINER
    assert sidecar["image"] == ray["image"]
    assert {"name": driver_log.VOLUME, "mountPath": driver_log.PATH} in ray["volumeMounts"]
    assert sidecar["volumeMounts"][0]["readOnly"] is True
    assert {"name": driver_log.VOLUME, "emptyDir": {}} in head["volumes"]
    assert rayjob["spec"]["entrypoint"].startswith(f"set -eu\n{driver_log.PREAMBLE}\n")
    workers = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert all(
        keys.DRIVER_LOG_CONTAINER not in [c["name"] for c in w["template"]["spec"]["containers"]]
        for w in workers
    )

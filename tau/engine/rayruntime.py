"""A private local Ray runtime for one attempt of a RayJob target.

KubeRay gives a RayJob its own RayCluster sized by `compute.workers` and
`gpus_per_worker`; locally the engine starts a head node with that many logical CPUs
(at least workers + 1, so a Train/Tune coordinator fits next to the workers) and the
requested GPUs, points the driver at it with RAY_ADDRESS, and stops it with the attempt.
Its daemons live in their own process group, recorded so `tau run cancel` can reap them
even when the supervising tau is gone.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tau.engine import procgroup
from tau.errors import RuntimeFailure

START_TIMEOUT = 180.0
STOP_GRACE = 5.0


@dataclass(frozen=True)
class RayHead:
    pgid: int
    address: str
    temp_dir: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(resources: dict[str, int], log: Path) -> RayHead:
    # Ray's socket paths must stay short, so the session dir lives under the system temp dir.
    temp_dir = Path(tempfile.mkdtemp(prefix="tau-ray-"))
    port = _free_port()
    argv = [
        sys.executable,
        "-m",
        "ray.scripts.scripts",
        "start",
        "--head",
        f"--port={port}",
        f"--num-cpus={resources['num_cpus']}",
        f"--num-gpus={resources['num_gpus']}",
        f"--temp-dir={temp_dir}",
        "--include-dashboard=false",
        "--disable-usage-stats",
    ]
    with open(log, "ab") as out:
        out.write(f"tau: starting a local Ray runtime ({resources})\n".encode())
        out.flush()
        process = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            code = process.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
    head = RayHead(process.pid, f"127.0.0.1:{port}", temp_dir)
    if code != 0:
        stop(head)
        raise RuntimeFailure(
            f"the local Ray runtime did not start (ray start exited {code}); see {log}",
            owner="researcher: local Python environment",
        )
    return head


def stop(head: RayHead) -> None:
    procgroup.kill_tree(head.pgid, STOP_GRACE)
    shutil.rmtree(head.temp_dir, ignore_errors=True)

"""A private local Ray runtime for one attempt of a RayJob target.

KubeRay gives a RayJob its own RayCluster sized by `compute.workers` and
`gpus_per_worker`; locally the engine starts a head node with that many logical CPUs
(at least workers + 1, so a Train/Tune coordinator fits next to the workers) and the
requested GPUs, points the driver at it with RAY_ADDRESS, and stops it with the attempt.
Its daemons live in their own process group, recorded so `tau run cancel` can reap them
even when the supervising tau is gone.

Ray turns token authentication on whenever it finds a token (say, a user's
~/.ray/auth_token), so a head and a driver that see different environments disagree and the
driver is refused. The engine therefore decides: each runtime gets its own token, in its
session directory (0600, removed with it), named to the head and the driver alike.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tau import keys
from tau.engine import procgroup
from tau.errors import RuntimeFailure

START_TIMEOUT = 180.0
STOP_GRACE = 5.0


@dataclass(frozen=True)
class RayHead:
    pgid: int
    address: str
    temp_dir: Path
    auth_env: dict[str, str]
    stamp: str = ""  # the launcher's start stamp, taken before it exits (procgroup.ours)

    @property
    def driver_env(self) -> dict[str, str]:
        return {keys.ENV_RAY_ADDRESS: self.address, **self.auth_env}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _auth_env(temp_dir: Path) -> dict[str, str]:
    token = temp_dir / "auth_token"
    descriptor = os.open(token, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(secrets.token_hex(32))
    return {keys.ENV_RAY_AUTH_MODE: "token", keys.ENV_RAY_AUTH_TOKEN_PATH: str(token)}


def start(resources: dict[str, int], log: Path, env: dict[str, str]) -> RayHead:
    """Start the head with the attempt's environment, so it sees what its driver sees."""
    # Ray's socket paths must stay short, so the session dir lives under the system temp dir.
    temp_dir = Path(tempfile.mkdtemp(prefix="tau-ray-"))
    auth_env = _auth_env(temp_dir)
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
            argv,
            env={**env, **auth_env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        stamp = procgroup.start_stamp(process.pid)
        try:
            code = process.wait(timeout=START_TIMEOUT)
        except subprocess.TimeoutExpired:
            code = None
    head = RayHead(process.pid, f"127.0.0.1:{port}", temp_dir, auth_env, stamp)
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

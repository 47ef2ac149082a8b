"""What the cluster benchmarks share: one command timed by wall and CPU clock, tau compiled
to bytecode before anything is timed, and the local control plane they run against (an
existing one through --kubeconfig, else one started for the run and stopped after it)."""

from __future__ import annotations

import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Timed:
    started: float  # time.perf_counter() when the command began
    wall: float
    cpu: float  # the child's user + system seconds: the stable number on a shared machine
    stdout: str
    stderr: str


def timed(
    cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
) -> Timed:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(
        cmd, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{result.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timed(started, wall, cpu, result.stdout, result.stderr)


def compile_tau() -> None:
    """An installed wheel ships bytecode; an editable checkout under PYTHONDONTWRITEBYTECODE
    would recompile tau's modules on every run and measure the compiler instead."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "tau")], check=True)


def on_cluster(kubeconfig: Path | None, body: Callable[[Any], None], purpose: str = "") -> None:
    """Run `body(cluster)` on the cluster `kubeconfig` administers, or on a fresh one."""
    sys.path.insert(0, str(REPO))
    from hack.localcluster import LocalCluster, build, start

    if kubeconfig:
        body(LocalCluster.from_kubeconfig(kubeconfig))
        return
    with tempfile.TemporaryDirectory() as state:
        print(f"starting a local control plane{purpose}...", file=sys.stderr)
        cluster = start(Path(state), build())
        try:
            body(cluster)
        finally:
            cluster.stop()

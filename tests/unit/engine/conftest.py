"""Local-engine specs run the installed `tau` console script as a researcher would.

Every test gets private state, data and experiment-store directories, so nothing from the
user's machine leaks in and nothing the tests write leaks out.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
TAU = shutil.which("tau", path=str(BIN)) or "tau"
PORTAL = shutil.which("taugrid-portal", path=str(BIN)) or "taugrid-portal"


@dataclass
class Local:
    env: dict[str, str]
    state: Path
    data: Path
    store: Path

    def tau(self, *args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(
            [TAU, *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )

    def popen(self, *args: str, cwd: Path, **popen: Any) -> subprocess.Popen:
        return subprocess.Popen(
            [TAU, *args],
            cwd=cwd,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **popen,
        )

    def portal(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [PORTAL, "experiment", "--store", str(self.store), *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    def runs(self) -> list[str]:
        root = self.state / "runs"
        return sorted(p.name for p in root.iterdir()) if root.is_dir() else []

    def record(self, name: str) -> dict:
        return json.loads((self.state / "runs" / name / "record.json").read_text())

    def status(self, name: str, cwd: Path) -> dict:
        result = self.tau("run", "status", name, "-o", "json", cwd=cwd)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


def private(root: Path) -> Local:
    """A researcher's machine under `root`: state, data and experiment store of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAU_")}
    env.update(
        TAU_LOCAL_STATE_DIR=str(root / "state"),
        XDG_DATA_HOME=str(root / "share"),
        XDG_STATE_HOME=str(root / "xdg-state"),
        TAU_CONFIG_DIR=str(root / "tau-config"),
    )
    share = root / "share" / "tau"
    return Local(env, root / "state", share / "data", share / "experiments")


@pytest.fixture
def local(tmp_path: Path) -> Local:
    return private(tmp_path)


def project(root: Path, target: str, config: str, scripts: dict[str, str]) -> Path:
    """A repository with tau/<target>.yaml and its scripts next to the tau/ directory."""
    (root / "tau").mkdir(parents=True, exist_ok=True)
    (root / "tau" / f"{target}.yaml").write_text(textwrap.dedent(config))
    for name, body in scripts.items():
        (root / name).write_text(textwrap.dedent(body))
    return root


def run_name(stderr: str) -> str:
    for line in stderr.splitlines():
        if line.startswith("local run ") and " started " in line:
            return line.split()[2]
    raise AssertionError(f"no 'local run NAME started' line in:\n{stderr}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie awaiting its reaper has exited too
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False

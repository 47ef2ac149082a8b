"""Handing off to the `tau` CLI: the SDK never renders or talks to a cluster itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tau import keys
from tau.errors import RuntimeFailure

TAU_BINARY = keys.ENV_BINARY


def tau_command() -> list[str]:
    """`$TAU_BINARY`, else `tau` on PATH, else this interpreter's `python -m tau`."""
    explicit = os.environ.get(TAU_BINARY)
    if explicit:
        if not os.path.exists(explicit):
            raise RuntimeFailure(f"{TAU_BINARY}={explicit} does not exist")
        return [explicit]
    found = shutil.which("tau")
    return [found] if found else [sys.executable, "-m", "tau"]


def run_tau(args: list[str], *, cwd: str | None = None) -> int:
    """Run `tau ARGS...` with this process's stdio; its exit status is returned."""
    return subprocess.run([*tau_command(), *args], cwd=cwd, check=False).returncode


def capture_tau(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*tau_command(), *args], capture_output=True, text=True, check=False)

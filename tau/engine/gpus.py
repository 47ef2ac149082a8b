"""Local NVIDIA GPUs, counted through nvidia-smi (absent = none)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuInventory:
    count: int
    names: tuple[str, ...] = ()
    detail: str = ""


def detect() -> GpuInventory:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return GpuInventory(0, detail="nvidia-smi not found")
    try:
        result = subprocess.run(
            [smi, "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return GpuInventory(0, detail=f"nvidia-smi failed: {error}")
    if result.returncode != 0:
        first = (result.stderr or result.stdout).strip().splitlines()[:1]
        return GpuInventory(0, detail=f"nvidia-smi failed: {first[0] if first else 'no output'}")
    names = tuple(line.strip() for line in result.stdout.splitlines() if line.strip())
    return GpuInventory(len(names), names, detail=f"{len(names)} GPU(s) via nvidia-smi")

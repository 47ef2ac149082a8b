"""Golden YAML snapshots: rendered output is pinned and every diff is reviewed.

Regenerate with `UPDATE_GOLDEN=1 pytest tests/unit/render`, then read the diff: a changed
golden is a changed contract with Kueue, KubeRay or the scheduler.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

GOLDEN_DIR = Path(__file__).parent / "golden"


def dump(objects: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, width=100)


def check(name: str, text: str) -> None:
    path = GOLDEN_DIR / f"{name}.yaml"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"no golden {path.name}; run with UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(), f"{path.name} differs; review, then UPDATE_GOLDEN=1"

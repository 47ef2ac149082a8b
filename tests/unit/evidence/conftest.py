"""Fixtures for the experiment store suite: real stores in tmp dirs, JSONL histories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def store_root(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def write_history(tmp_path: Path) -> Callable[..., Path]:
    def write(rows: list[Any], name: str = "history.jsonl") -> Path:
        path = tmp_path / name
        lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
        path.write_text("\n".join(lines) + "\n")
        return path

    return write

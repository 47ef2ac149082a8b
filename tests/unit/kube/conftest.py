"""Every test here talks to a scripted API server (tests/unit/scripted_api.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.scripted_api import ScriptedServer, scripted_api


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[tuple[ScriptedServer, Path]]:
    with scripted_api(tmp_path) as answered:
        yield answered

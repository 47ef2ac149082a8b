"""Snapshots recorded from the local control plane (KWOK pod outcomes, a real Kueue)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.lifecycle.snapshot import Snapshot

RECORDED = Path(__file__).parent / "snapshots"


def recorded(name: str) -> Snapshot:
    return Snapshot.from_dict(json.loads((RECORDED / f"{name}.json").read_text()))


@pytest.fixture
def snapshot():
    return recorded

"""Throwaway Git worktrees and a private Tau config dir for discovery/state tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.descriptors import descriptor_text


def _write_descriptor(root: Path, workspace: str = "research", context: str = "lab") -> Path:
    path = root / "tau" / "workspace.connection.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(descriptor_text(workspace, context))
    return path


def _make_repo(path: Path) -> Path:
    """A Git worktree root as discovery sees it (a `.git` entry)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / ".git").mkdir()
    return path


@pytest.fixture(autouse=True)
def tau_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = tmp_path / "tau-config"
    monkeypatch.setenv("TAU_CONFIG_DIR", str(config))
    return config


@pytest.fixture
def write_descriptor():
    return _write_descriptor


@pytest.fixture
def make_repo():
    return _make_repo

"""Throwaway Git worktrees and a private Tau config dir for discovery/state tests.

The fixtures are imported by the conftest of each suite that needs them (connection, resolve).
"""

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


@pytest.fixture
def monorepo(tmp_path: Path, make_repo, write_descriptor):
    """A two-project monorepo; pass catalog text to replace the valid default."""
    return lambda catalog=None: _monorepo(tmp_path, catalog, make_repo, write_descriptor)


def _monorepo(tmp_path: Path, catalog: str | None, make_repo, write_descriptor) -> Path:
    repo = make_repo(tmp_path / "mono")
    for name, workspace in (("vision", "research"), ("speech", "speech-lab")):
        write_descriptor(repo / "projects" / name, workspace=workspace)
    (repo / "projects" / "vision" / "tau" / "train.yaml").write_text("run: {}\n")
    (repo / "projects" / "speech" / "tau" / "eval.yaml").write_text("run: {}\n")
    (repo / "projects" / "speech" / "tau" / "shared.yaml").write_text("run: {}\n")
    (repo / "projects" / "vision" / "tau" / "shared.yaml").write_text("run: {}\n")
    (repo / "tau.projects.yaml").write_text(
        catalog
        or """\
schema: tau.projects.v1
projects:
  vision:
    path: projects/vision
    connection: projects/vision/tau/workspace.connection.yaml
    workspace: research
  speech:
    path: projects/speech
    connection: projects/speech/tau/workspace.connection.yaml
"""
    )
    return repo

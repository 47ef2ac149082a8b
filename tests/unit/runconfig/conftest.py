"""Helpers for run config specs: load YAML text as a file and collect its problems."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from tau.runconfig import ConfigError, ConfigIssue, LoadedConfig, load


@pytest.fixture
def write(tmp_path: Path):
    """Write YAML text (dedented) to tau.yaml in a temp dir and return its path."""

    def _write(text: str, name: str = "tau.yaml") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text).lstrip())
        return path

    return _write


@pytest.fixture
def loads(write):
    """Load YAML text as a run config file."""

    def _loads(text: str) -> LoadedConfig:
        return load(write(text))

    return _loads


@pytest.fixture
def issues(write):
    """The problems a YAML text has (fails the test if it loads cleanly)."""

    def _issues(text: str) -> list[ConfigIssue]:
        with pytest.raises(ConfigError) as caught:
            load(write(text))
        return caught.value.issues

    return _issues

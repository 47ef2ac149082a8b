"""Every YAML file discovery reads refuses hostile text at its line instead of hanging."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tau.connection import (
    CATALOG_FILE,
    find_repository,
    load_catalog,
    load_merged,
    parse_descriptor_text,
)
from tau.errors import ValidationError
from tau.kube import AccessError
from tests.unit.descriptors import descriptor_text

BOMB = "".join(
    [f"a0: &a0 [{', '.join(['lol'] * 10)}]\n"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)]
)
HOSTILE = {
    "alias bomb": (BOMB, "too many nodes"),
    "recursive alias": ("loop: &l [*l]\n", "recursive YAML alias"),
    "custom tag": ("workspace: !custom research\n", "YAML tag '!custom' is not allowed"),
    "bad bool": ("network: {privateCluster: !!bool maybe}\n", "'maybe' is not a valid bool"),
    "huge int": ("requirements: {minTauVersion: " + "9" * 5000 + "}\n", "is not a valid int"),
}


@pytest.mark.timeout(5)
@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_descriptor_is_one_validation_error_with_its_line(case: str) -> None:
    text, problem = HOSTILE[case]
    with pytest.raises(ValidationError) as caught:
        parse_descriptor_text(text, "tau/workspace.connection.yaml")
    line = caught.value.one_line()
    assert line.startswith("descriptor: tau/workspace.connection.yaml: line ")
    assert problem in line and "\n" not in line and len(line) < 400


@pytest.mark.timeout(5)
@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_catalog_is_refused(case: str, tmp_path: Path, make_repo) -> None:
    repo = make_repo(tmp_path / "mono")
    (repo / CATALOG_FILE).write_text(HOSTILE[case][0])
    with pytest.raises(ValidationError) as caught:
        load_catalog(find_repository(repo))
    assert "line " in caught.value.one_line()


@pytest.mark.timeout(5)
def test_a_hostile_kubeconfig_is_one_access_error(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(BOMB)
    with pytest.raises(AccessError):
        load_merged([path])


@pytest.mark.timeout(20)
def test_the_cli_answers_an_alias_bomb_descriptor_with_one_line(tmp_path: Path, make_repo) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "tau").mkdir()
    (repo / "tau" / "workspace.connection.yaml").write_text(descriptor_text() + BOMB)
    result = subprocess.run(
        [sys.executable, "-m", "tau", "workspace", "connection", "--offline"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=15,
        env={**os.environ, "TAU_CONFIG_DIR": str(tmp_path / "cfg")},
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "internal error" not in result.stderr
    assert "line 16: aliases expand the document to too many nodes" in result.stderr


@pytest.mark.timeout(10)
def test_an_oversized_descriptor_is_refused_before_any_scan() -> None:
    text = descriptor_text() + "note: " + "t," * 2_000_000 + ":\n"
    with pytest.raises(ValidationError) as caught:
        parse_descriptor_text(text, "tau/workspace.connection.yaml")
    assert "a connection descriptor holds at most 262144" in caught.value.one_line()

"""`tau run [TARGET] [--config F] [--project P]`: which config a run means, monorepo or not."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tau.errors import UsageError, ValidationError
from tau.resolve.target import Located, check_workspace_agrees, locate_run_config


def test_outside_a_catalog_the_single_project_discovery_applies(tmp_path, make_repo):
    repo = make_repo(tmp_path / "plain")
    (repo / "tau").mkdir()
    (repo / "tau" / "train.yaml").write_text("name: t\n")
    located = locate_run_config(repo, target="train")
    assert located.project is None
    assert (repo / located.path).resolve() == (repo / "tau" / "train.yaml").resolve()
    with pytest.raises(UsageError, match=r"--project requires tau\.projects\.yaml"):
        locate_run_config(repo, target="train", project="vision")


def test_a_target_resolves_inside_the_project_that_holds_it(monorepo):
    repo = monorepo()
    located = locate_run_config(repo, target="eval")
    assert located.project.name == "speech"
    assert located.path == repo / "projects" / "speech" / "tau" / "eval.yaml"


def test_project_flag_selects_and_a_missing_target_names_the_expected_file(monorepo):
    repo = monorepo()
    assert locate_run_config(repo, target="shared", project="vision").project.name == "vision"
    with pytest.raises(UsageError, match="run target \"eval\" not found in project 'vision'"):
        locate_run_config(repo, target="eval", project="vision")
    with pytest.raises(UsageError, match="exists in projects: speech, vision"):
        locate_run_config(repo, target="shared")


def test_a_path_shaped_target_is_refused_before_project_selection(monorepo):
    with pytest.raises(UsageError, match="must be a name, not a path"):
        locate_run_config(monorepo(), target="projects/vision/tau/train.yaml")


def test_without_a_target_the_projects_default_config_is_used(monorepo):
    repo = monorepo()
    vision = repo / "projects" / "vision"
    with pytest.raises(UsageError, match="no Tau run config found in project 'vision'"):
        locate_run_config(vision)
    (vision / "tau.yaml").write_text("name: v\n")
    assert locate_run_config(vision).path == vision / "tau.yaml"


def test_the_catalog_workspace_binds_the_config_and_the_flag(monorepo):
    repo = monorepo()
    located = locate_run_config(repo, target="train")
    check_workspace_agrees(located, "research", "research")
    with pytest.raises(ValidationError, match=r"run config policy\.workspace 'other' conflicts"):
        check_workspace_agrees(located, "other", "")
    with pytest.raises(ValidationError, match="--workspace 'other' conflicts"):
        check_workspace_agrees(located, "", "other")
    check_workspace_agrees(Located(Path("x.yaml")), "anything", "else")


def test_tau_run_selects_the_project_from_the_target(monorepo):
    repo = monorepo()
    result = subprocess.run(
        [sys.executable, "-m", "tau", "run", "eval", "--dry-run=client"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert "not available yet" not in result.stderr
    assert "projects/speech/tau/eval.yaml" in result.stderr

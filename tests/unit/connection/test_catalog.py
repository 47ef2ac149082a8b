"""The monorepo catalog: strict shape, path rules and selection precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.connection import (
    default_config,
    discover_connection,
    find_repository,
    load_catalog,
    project_targets,
    select_lifecycle_project,
    select_project,
)
from tau.errors import UsageError, ValidationError


def catalog_problems(repo: Path) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        load_catalog(find_repository(repo))
    return caught.value.problems or [caught.value.one_line()]


def test_a_valid_catalog_lists_projects_and_their_targets(tmp_path, monorepo):
    repo = monorepo()
    catalog = load_catalog(find_repository(repo))
    assert sorted(catalog.projects) == ["speech", "vision"]
    assert sorted(project_targets(catalog.projects["vision"])) == ["shared", "train"]
    assert default_config(catalog.projects["vision"]) is None


def test_the_catalog_is_only_read_at_the_worktree_root(tmp_path, monorepo):
    repo = monorepo()
    nested = repo / "projects" / "vision"
    (nested / "tau.projects.yaml").write_text("garbage: [")
    source = discover_connection(nested)
    assert source.project == "vision"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("", "catalog is empty"),
        ("schema: tau.projects.v1\nprojects:\n  a:\n    path: 1\n", "must be a string"),
        ("schema: tau.projects.v1\nprojects: {}\n", "at least one project"),
        ("schema: tau.projects.v2\nprojects: {}\n", "schema: must be tau.projects.v1"),
        ("schema: tau.projects.v1\nx: &a y\nprojects: *a\n", "anchors and aliases"),
        ("schema: tau.projects.v1\nschema: tau.projects.v1\n", "duplicate key"),
        ("schema: tau.projects.v1\nprojects:\n  Vision:\n    path: p\n", "lowercase DNS label"),
    ],
)
def test_catalog_shape_rules(tmp_path, body, expected, monorepo):
    repo = monorepo(body or " ")
    assert any(expected in problem for problem in catalog_problems(repo))


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/abs/path", "repository-relative"),
        ("C:/x", "repository-relative"),
        ("projects\\vision", "forward slashes"),
        ("projects/../projects/vision", "'..' path components"),
        (" projects/vision", "surrounding whitespace"),
        ("projects/missing", "is not a directory"),
    ],
)
def test_project_path_rules(tmp_path, path, expected, monorepo):
    body = (
        "schema: tau.projects.v1\nprojects:\n  vision:\n"
        f"    path: '{path}'\n    connection: projects/vision/tau/workspace.connection.yaml\n"
    )
    assert any(expected in problem for problem in catalog_problems(monorepo(body)))


def test_project_roots_must_be_disjoint_and_outside_submodules(tmp_path, monorepo):
    body = """\
schema: tau.projects.v1
projects:
  all:
    path: projects
    connection: projects/vision/tau/workspace.connection.yaml
  vision:
    path: projects/vision
    connection: projects/vision/tau/workspace.connection.yaml
"""
    repo = monorepo(body)
    assert any("project roots must be disjoint" in p for p in catalog_problems(repo))
    (repo / "projects" / "vision" / ".git").write_text("gitdir: ../../.git/modules/vision\n")
    assert any("Git submodule" in p for p in catalog_problems(repo))


def test_a_catalog_workspace_must_match_its_descriptor(tmp_path, monorepo):
    body = """\
schema: tau.projects.v1
projects:
  vision:
    path: projects/vision
    connection: projects/vision/tau/workspace.connection.yaml
    workspace: elsewhere
"""
    problems = catalog_problems(monorepo(body))
    assert any("'elsewhere' conflicts with connection workspace 'research'" in p for p in problems)


def test_submission_selection_precedence(tmp_path, monorepo):
    repo = monorepo()
    catalog = load_catalog(find_repository(repo))
    vision = repo / "projects" / "vision"
    assert select_project(catalog, project="speech", cwd=vision).name == "speech"
    config = vision / "tau" / "train.yaml"
    assert select_project(catalog, config=config, cwd=repo).name == "vision"
    with pytest.raises(UsageError, match="does not own --config"):
        select_project(catalog, project="speech", config=config, cwd=repo)
    with pytest.raises(UsageError, match="not owned by any Tau project"):
        select_project(catalog, config=repo / "tau.projects.yaml", cwd=repo)
    assert select_project(catalog, cwd=vision / "tau").name == "vision"
    assert select_project(catalog, cwd=repo, target="eval").name == "speech"
    with pytest.raises(UsageError, match="run target 'shared' exists in projects: speech, vision"):
        select_project(catalog, cwd=repo, target="shared")
    with pytest.raises(UsageError, match="Tau project is ambiguous; rerun with --project"):
        select_project(catalog, cwd=repo, target="smoke")
    with pytest.raises(UsageError, match="unknown Tau project 'nope'; valid projects: speech"):
        select_project(catalog, project="nope", cwd=repo)


def test_lifecycle_selection_never_uses_run_names(tmp_path, monorepo):
    repo = monorepo()
    catalog = load_catalog(find_repository(repo))
    with pytest.raises(UsageError, match="lifecycle routing is ambiguous"):
        select_lifecycle_project(catalog, cwd=repo)
    assert select_lifecycle_project(catalog, cwd=repo / "projects" / "speech").name == "speech"


def test_connection_discovery_in_a_monorepo_uses_the_selected_project(tmp_path, monorepo):
    repo = monorepo()
    assert discover_connection(repo, project="speech").descriptor.workspace == "speech-lab"
    with pytest.raises(UsageError, match="ambiguous"):
        discover_connection(repo)


def test_project_flag_needs_a_catalog(tmp_path, make_repo, write_descriptor):
    repo = make_repo(tmp_path / "single")
    write_descriptor(repo)
    with pytest.raises(UsageError, match=r"--project requires tau\.projects\.yaml"):
        discover_connection(repo, project="vision")


def test_both_extensions_for_one_target_is_an_error(tmp_path, monorepo):
    repo = monorepo()
    (repo / "projects" / "vision" / "tau" / "train.yml").write_text("run: {}\n")
    catalog = load_catalog(find_repository(repo))
    with pytest.raises(ValidationError, match="keep exactly one extension"):
        project_targets(catalog.projects["vision"])

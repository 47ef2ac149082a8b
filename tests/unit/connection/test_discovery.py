"""Discovery walks up to the Git worktree boundary and never above it."""

from __future__ import annotations

import os

import pytest

from tau.connection import (
    DescriptorNotFound,
    discover_connection,
    find_repository,
    load_descriptor,
)
from tau.errors import ValidationError


def test_the_descriptor_is_found_from_a_nested_directory(tmp_path, make_repo, write_descriptor):
    repo = make_repo(tmp_path / "repo")
    path = write_descriptor(repo)
    nested = repo / "src" / "pkg"
    nested.mkdir(parents=True)
    source = discover_connection(nested)
    assert source.kind == "descriptor"
    assert source.path == path
    assert source.shown == "tau/workspace.connection.yaml"
    assert source.descriptor.workspace == "research"


def test_discovery_never_looks_above_the_worktree(tmp_path, make_repo, write_descriptor):
    write_descriptor(tmp_path)  # a descriptor in the parent of the repository
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(DescriptorNotFound) as caught:
        discover_connection(repo)
    line = caught.value.one_line()
    assert f"repository boundary {repo}" in line
    assert "tau workspace connection assign" in line


def test_a_git_file_marks_a_linked_worktree_boundary(tmp_path, write_descriptor):
    write_descriptor(tmp_path)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")
    assert find_repository(worktree / ".").root == worktree
    with pytest.raises(DescriptorNotFound):
        discover_connection(worktree)


def test_outside_git_the_start_directory_is_the_boundary(tmp_path, write_descriptor):
    write_descriptor(tmp_path)
    child = tmp_path / "child"
    child.mkdir()
    assert not find_repository(child).git
    with pytest.raises(DescriptorNotFound):
        discover_connection(child)
    assert discover_connection(tmp_path).descriptor.workspace == "research"


def test_a_descriptor_symlinked_from_outside_the_repository_is_refused(
    tmp_path, make_repo, write_descriptor
):
    outside = write_descriptor(tmp_path / "outside")
    repo = make_repo(tmp_path / "repo")
    (repo / "tau").mkdir()
    os.symlink(outside, repo / "tau" / "workspace.connection.yaml")
    with pytest.raises(ValidationError, match="escapes repository root"):
        discover_connection(repo)


def test_an_explicit_path_outside_the_repository_is_refused(tmp_path, make_repo, write_descriptor):
    outside = write_descriptor(tmp_path / "outside")
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(ValidationError, match="escapes repository root"):
        load_descriptor(outside, find_repository(repo))


def test_a_directory_named_like_the_descriptor_is_not_a_regular_file(tmp_path, make_repo):
    repo = make_repo(tmp_path / "repo")
    (repo / "tau" / "workspace.connection.yaml").mkdir(parents=True)
    with pytest.raises(ValidationError, match="not a regular file"):
        discover_connection(repo)

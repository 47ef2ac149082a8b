"""Which workspace connection a command runs against, in one fixed order.

A checked-in descriptor always wins over a local assignment; a monorepo catalog names each
project's descriptor, so assignments serve single-project repositories only.
"""

from __future__ import annotations

import os
from pathlib import Path

from tau.connection import catalog, localstate
from tau.connection.descriptor import (
    ConnectionSource,
    DescriptorNotFound,
    find_descriptor,
    find_repository,
    load_descriptor,
)
from tau.errors import UsageError


def discover_connection(
    start: str | os.PathLike[str] = ".",
    *,
    project: str = "",
    descriptor_path: str | os.PathLike[str] | None = None,
    config_dir: Path | None = None,
) -> ConnectionSource:
    """Resolve the connection for the project containing `start` (or named by `project`).

    Order: an explicit descriptor path; the catalog project's `connection`; the nearest
    descriptor up to the repository boundary; this checkout's local assignment. Catalog
    projects always name a checked-in connection, so assignments serve single-project
    repositories.
    """
    start_dir = Path(os.path.abspath(start))
    repository = find_repository(start_dir)
    if descriptor_path is not None:
        path = Path(os.path.abspath(descriptor_path))
        descriptor = load_descriptor(path, repository)
        return ConnectionSource(descriptor, "descriptor", repository, None, repository.root, path)
    projects = catalog.load_catalog(repository)
    if projects is not None:
        selected = catalog.select_lifecycle_project(projects, project=project, cwd=start_dir)
        return ConnectionSource(
            load_descriptor(selected.connection, repository),
            "descriptor",
            repository,
            selected.name,
            selected.root,
            selected.connection,
        )
    if project:
        raise UsageError("--project requires tau.projects.yaml at the Git worktree root")
    try:
        path = find_descriptor(start_dir, repository)
    except DescriptorNotFound as not_found:
        assignment = localstate.load_assignment(repository, config_dir=config_dir)
        if assignment is None:
            raise not_found from None
        return ConnectionSource(
            assignment.descriptor,
            "assignment",
            repository,
            None,
            repository.root,
            assignment.path,
        )
    return ConnectionSource(
        load_descriptor(path, repository), "descriptor", repository, None, repository.root, path
    )

"""Which run config `tau run [TARGET] [--config F] [--project P]` means.

A repository with `tau.projects.yaml` at its Git worktree root is a monorepo: the project is
selected first (precedence of reference §7.3) and targets resolve inside that project. Anywhere
else the single-project discovery of `tau.runconfig.discover` applies.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tau.connection import (
    Project,
    check_workspace_binding,
    default_config,
    find_repository,
    load_catalog,
    project_targets,
    select_project,
)
from tau.errors import UsageError
from tau.runconfig import discover
from tau.runconfig.discovery import check_target_name, missing_target


@dataclass(frozen=True)
class Located:
    path: Path
    project: Project | None = None


def locate_run_config(
    cwd: str | os.PathLike[str],
    *,
    target: str | None = None,
    config: str | None = None,
    project: str = "",
) -> Located:
    cwd = Path(cwd)
    projects = load_catalog(find_repository(cwd))
    if projects is None:
        if project:
            raise UsageError("--project requires tau.projects.yaml at the Git worktree root")
        return Located(discover(cwd, target=target, config=config))
    if target:
        check_target_name(target)
    config_path = None
    if config:
        config_path = Path(config) if Path(config).is_absolute() else cwd / config
    selected = select_project(
        projects, project=project, config=config_path, cwd=cwd, target=target or ""
    )
    if config_path is not None:
        return Located(discover(cwd, config=config), selected)
    if target:
        found = project_targets(selected).get(target)
        if found is None:
            raise missing_target(
                target, selected.root / "tau", where=f" in project {selected.name!r}"
            )
        return Located(found, selected)
    default = default_config(selected)
    if default is None:
        raise UsageError(
            f"no Tau run config found in project {selected.name!r}; "
            "create tau.yaml or pass --config"
        )
    return Located(default, selected)


def check_workspace_agrees(located: Located, policy_workspace: str, flag_workspace: str) -> None:
    """A catalog project's `workspace` binds the run: the config and --workspace must agree."""
    if located.project is None:
        return
    check_workspace_binding(located.project, policy_workspace, "run config policy.workspace")
    check_workspace_binding(located.project, flag_workspace, "--workspace")

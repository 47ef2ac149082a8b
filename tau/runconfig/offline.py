"""The problems `tau run validate` finds beyond the schema and the field rules.

The loader checks the file as data. A run also needs a name (which `NAME --config F` may
supply) and an entrypoint that exists beside the config; an empty file is valid YAML but no
run. These depend on the command line and the file system, so they are checked here, after
loading, and the dry-run never refuses a config that validate accepted for one of them.
"""

from __future__ import annotations

from pathlib import Path

from tau.runconfig.issues import ConfigError, ConfigIssue
from tau.runconfig.loader import LoadedConfig, parse_dotted
from tau.runconfig.models import Execution, RunConfig
from tau.runconfig.rules.workload import name_problem


def check_runnable(loaded: LoadedConfig, *, run_name: str = "") -> None:
    """Raise ConfigError listing every offline problem; `run_name` is the NAME override."""
    config = loaded.config
    if not isinstance(config, RunConfig):
        return
    file = str(loaded.path)
    issues: list[ConfigIssue] = []
    if not loaded.source.data:
        issues.append(
            ConfigIssue(
                file,
                "",
                "the run config is empty; write at least name, engine and "
                "entrypoint (see `tau run explain-config`)",
            )
        )
    elif run_name:
        problem = name_problem(run_name, config.engine_value, _nodes(config))
        if problem:
            issues.append(ConfigIssue(file, "", f"NAME: {problem}"))
    elif not config.run_name:
        issues.append(
            ConfigIssue(
                file,
                "name",
                "name is required; set name: in the run config, or pass NAME with --config",
            )
        )
    entrypoint = loaded.entrypoint_path()
    if entrypoint is not None and not _is_file(entrypoint):
        where = _entrypoint_field(loaded)
        position = loaded.position(where)
        issues.append(
            ConfigIssue(
                file,
                where,
                f"{config.entrypoint_value!r} does not exist beside the run config "
                "(entrypoint paths are relative to the config file)",
                position.line if position else None,
                position.column if position else None,
            )
        )
    if issues:
        raise ConfigError(file, issues)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _entrypoint_field(loaded: LoadedConfig) -> str:
    for dotted in ("run.entrypoint", "run.script", "entrypoint", "script"):
        # The key itself: position() falls back to the enclosing node (the document), which
        # named run.entrypoint at 1:1 for a top-level `entrypoint:`.
        if parse_dotted(dotted) in loaded.source.keys:
            return dotted
    return "entrypoint"


def _nodes(config: RunConfig) -> int:
    return (config.execution or Execution()).nodes

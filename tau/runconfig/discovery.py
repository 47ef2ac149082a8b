"""Finding the run config a command means: `--config`, a named TARGET, or the default files."""

from __future__ import annotations

from pathlib import Path

from tau import keys
from tau.errors import UsageError

TARGET_DIR = "tau"


def check_target_name(target: str) -> None:
    """A TARGET names a checked-in `tau/<TARGET>.yaml`; paths go through --config."""
    if (
        not target
        or "/" in target
        or "\\" in target
        or target in (".", "..")
        or (target.endswith((".yaml", ".yml")))
    ):
        raise UsageError(
            f'run target "{target}" must be a name, not a path; use --config for explicit paths'
        )


def missing_target(target: str, folder: Path, where: str = "") -> UsageError:
    """Target not found: name the file expected and the nearest checked-in target."""
    from tau.runconfig.suggest import nearest

    names = sorted(
        {
            entry.stem
            for entry in (folder.iterdir() if folder.is_dir() else ())
            if entry.suffix in (".yaml", ".yml")
            and entry.name != "workspace.connection.yaml"
            and entry.is_file()
        }
    )
    guess = nearest(target, names)
    message = f'run target "{target}" not found{where}; expected {folder.name}/{target}.yaml'
    if guess:
        message += f'; did you mean "{guess}"?'
    elif names:
        message += f" (targets: {', '.join(names[:10])}{', ...' if len(names) > 10 else ''})"
    return UsageError(message, hint="or pass --config", owner="researcher")


def _shown(path: Path, cwd: Path) -> Path:
    """Paths under the working directory are shown relative to it, like the user typed them."""
    try:
        return path.relative_to(cwd)
    except ValueError:
        return path


def discover(cwd: str | Path, target: str | None = None, config: str | Path | None = None) -> Path:
    """The run config file for `tau run [TARGET] [--config FILE]` started in `cwd`.

    Returned paths are relative to `cwd` when they lie below it (so messages read like the
    command line), else absolute.
    """
    cwd = Path(cwd)
    if config:
        given = Path(config)
        candidate = given if given.is_absolute() else cwd / given
        if not candidate.exists():
            raise UsageError(f"--config {config}: no such file", hint="check the path")
        if not candidate.is_file():
            raise UsageError(f"--config {config}: not a regular file")
        return given if not given.is_absolute() else candidate
    if target:
        check_target_name(target)
        found = [
            cwd / TARGET_DIR / f"{target}{ext}"
            for ext in (".yaml", ".yml")
            if (cwd / TARGET_DIR / f"{target}{ext}").is_file()
        ]
        if len(found) > 1:
            raise UsageError(
                f'run target "{target}" has both tau/{target}.yaml and tau/{target}.yml; '
                "keep exactly one extension"
            )
        if not found:
            raise missing_target(target, cwd / TARGET_DIR)
        return _shown(found[0], cwd)
    for name in keys.CONFIG_FILE_NAMES:
        if (cwd / name).is_file():
            return _shown(cwd / name, cwd)
    raise UsageError("no Tau run config found; create tau.yaml or pass --config")

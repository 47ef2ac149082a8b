"""Flags shared by cluster-touching commands, defined once so their help, env and parsing agree."""

from __future__ import annotations

from typing import cast

import typer

from tau import keys
from tau.errors import UsageError

# typer.Option returns its OptionInfo typed Any, so that it can default a parameter of any
# type; each factory names the type of the parameter it defaults.


def context_option() -> str:
    return cast(
        str,
        typer.Option(
            "",
            "--context",
            envvar=keys.ENV_CONTEXT,
            show_envvar=True,
            help="Kubeconfig context (default: $TAU_CONTEXT, else the workspace connection's).",
        ),
    )


def namespace_option(help: str = "Workload namespace (default: from the workspace).") -> str:
    return cast(str, typer.Option("", "-n", "--namespace", help=help))


def workspace_option() -> str:
    return cast(
        str,
        typer.Option(
            "",
            "--workspace",
            help="TauWorkspace whose defaults and connection to use.",
        ),
    )


def duration_seconds(flag: str, value: str) -> float:
    """A duration flag in seconds: a bare number, or a duration such as 2s or 1m."""
    from tau.runconfig.durations import parse_duration

    try:
        seconds = float(value) if value.replace(".", "", 1).isdigit() else parse_duration(value)
    except ValueError:
        raise UsageError(f"{flag} must be a duration such as 2s or 1m; got {value!r}") from None
    if seconds <= 0:
        raise UsageError(f"{flag} must be > 0")
    return seconds

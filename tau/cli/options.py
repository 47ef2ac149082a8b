"""Flags shared by cluster-touching commands, defined once so their help and env are uniform."""

from __future__ import annotations

from typing import Any

import typer

from tau import keys


def context_option() -> Any:
    return typer.Option(
        "",
        "--context",
        envvar=keys.ENV_CONTEXT,
        show_envvar=True,
        help="Kubeconfig context (default: $TAU_CONTEXT, else the workspace connection's).",
    )


def namespace_option(help: str = "Workload namespace (default: from the workspace).") -> Any:
    return typer.Option("", "-n", "--namespace", help=help)


def workspace_option() -> Any:
    return typer.Option(
        "",
        "--workspace",
        help="TauWorkspace whose defaults and connection to use.",
    )

"""`tau version`."""

from __future__ import annotations

import platform

import typer

from tau.version import __version__

app = typer.Typer(rich_markup_mode=None, add_completion=False)


@app.command(help="Print the installed CLI version.")
def version(
    short: bool = typer.Option(False, "--short", help="Print only the bare version string."),
) -> None:
    if short:
        typer.echo(__version__)
    else:
        typer.echo(f"tau version {__version__} (python {platform.python_version()})")

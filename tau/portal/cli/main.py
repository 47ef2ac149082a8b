"""Entry point of `taugrid-portal`: the experiment evidence commands and `version`.

Errors follow the same contract as `tau` (one line, exit 2 for usage, 1 for runtime) because
both go through `tau.cli.main.run`.
"""

from __future__ import annotations

import platform
import sys

import click

from tau.cli.main import run
from tau.portal.cli.aliases import AliasGroup
from tau.portal.cli.experiment import experiment
from tau.portal.cli.kusto import kusto
from tau.portal.cli.offload import offload
from tau.portal.cli.portal import portal
from tau.version import __version__

cli = AliasGroup(
    name="taugrid-portal",
    help=(
        "Keep and show the evidence a run leaves behind.\n\n"
        "The experiment store (SQLite index + Parquet metrics + artifacts) is the authoritative "
        "packet; Stellar dashboards, search and comparisons are projections of it."
    ),
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    no_args_is_help=True,
    aliases={"exp": "experiment"},
)
experiment.add_command(offload)
experiment.add_command(kusto)
cli.add_command(experiment)
cli.add_command(portal)


@cli.command(help="Print the installed taugrid-portal version.")
@click.option("--short", is_flag=True, help="Print only the bare version string.")
def version(short: bool) -> None:
    if short:
        click.echo(__version__)
    else:
        click.echo(f"taugrid-portal version {__version__} (python {platform.python_version()})")


def main() -> None:
    sys.exit(run(cli, "taugrid-portal"))

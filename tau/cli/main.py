"""Entry point of `tau`: the lazily loaded public roots and the one place errors are printed.

Roots are imported only when invoked, so `tau run validate` never pays for the modules behind
`tau cluster` or `tau workspace`. The public roots are a closed set (see `PUBLIC_ROOTS`); a
root is registered here only once it has working subcommands.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass

import click

from tau import keys
from tau.errors import EXIT_RUNTIME, EXIT_USAGE, TauError, clean
from tau.version import __version__

# The only roots that may ever exist, in help order.
PUBLIC_ROOTS = ("cluster", "workspace", "run", "logs", "serve", "data", "python", "version")


@dataclass(frozen=True)
class Root:
    module: str
    help: str


# Registered roots: add an entry when a root's first real subcommand lands.
ROOTS: dict[str, Root] = {
    "cluster": Root("tau.cli.cluster", "Install/uninstall TauGrid and validate a cluster"),
    "workspace": Root("tau.cli.workspace", "Connect, inspect, create and adopt workspaces"),
    "run": Root("tau.cli.run", "Validate, render and submit a checked-in run config"),
    "logs": Root("tau.cli.logs", "Print a run's logs, found across your workspaces"),
    "serve": Root("tau.cli.serve", "Render and manage serving deployments"),
    "data": Root("tau.cli.data", "Inspect dataset and model registries"),
    "python": Root("tau.cli.python", "Author decorator-based @tau.train / @tau.eval workflows"),
    "version": Root("tau.cli.version", "Print the installed CLI version"),
}


class LazyRoots(click.Group):
    """Resolve root commands on demand from `ROOTS`."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in PUBLIC_ROOTS if name in ROOTS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        root = ROOTS.get(cmd_name)
        if root is None:
            return None
        import typer.main

        from tau.cli.boolflags import accept_bool_values
        from tau.cli.helptext import keep_example_blocks

        module = importlib.import_module(root.module)
        app = module.app
        command = app if isinstance(app, click.Command) else typer.main.get_command(app)
        command.name = cmd_name
        return keep_example_blocks(accept_bool_values(command))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, ROOTS[name].help) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


cli = LazyRoots(
    name="tau",
    help=(
        "Repository-first AI workloads on Kubernetes.\n\n"
        "Keep a workload's intent in a checked-in tau.yaml; tau resolves, validates, renders, "
        "submits and observes it. Kueue admits, Kubernetes schedules, Ray runs."
    ),
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    no_args_is_help=True,
)
cli = click.version_option(
    __version__, "--version", prog_name="tau", message="%(prog)s %(version)s"
)(cli)


def report(error: TauError) -> None:
    """Print a TauError as its one line plus any collected problems."""
    problems = getattr(error, "problems", [])
    for problem in problems:
        click.echo(f"  - {clean(problem)}", err=True)
    click.echo(f"error: {error.one_line()}", err=True)


def run(group: click.Group, prog_name: str, args: list[str] | None = None) -> int:
    """Invoke a click group, turning every failure into one line and an exit code."""
    try:
        result = group.main(args=args, prog_name=prog_name, standalone_mode=False)
    except TauError as error:
        report(error)
        return error.exit_code
    except click.exceptions.UsageError as error:
        hint = ""
        if error.ctx is not None:
            hint = f" (see '{error.ctx.command_path} --help')"
        click.echo(f"error: {clean(error.format_message())}{hint}", err=True)
        return EXIT_USAGE
    except click.exceptions.ClickException as error:
        click.echo(f"error: {clean(error.format_message())}", err=True)
        return error.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return EXIT_RUNTIME
    except Exception as error:
        if os.environ.get(keys.ENV_DEBUG):
            raise
        click.echo(
            f"error: internal error ({type(error).__name__}: {clean(str(error), 200)}); "
            "rerun with TAU_DEBUG=1 for a traceback and report it (owner: TauGrid maintainers)",
            err=True,
        )
        return EXIT_RUNTIME
    return result if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run(cli, "tau"))

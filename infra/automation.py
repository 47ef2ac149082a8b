"""`python -m infra.automation preview|up|destroy --stack NAME`: the stack program on the real
Pulumi engine without a Python language plugin (see infra/engine.py).

The engine's progress goes to stderr as it happens; stdout gets the result: the change counts
and, after `up`, the stack outputs (`-o json` for both as one document).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from infra.engine import PROJECT_ROOT, EngineOptions, Outcome, run
from tau.cli.main import run as run_cli
from tau.cli.output import OUTPUT_OPTION_HELP, Output, check_output, emit

STACK_NAME_HELP = "Stack name: its config is stacks/Pulumi.<NAME>.yaml in the work directory."


def _progress(line: str) -> None:
    click.echo(line.rstrip("\n"), err=True)


def _summary(outcome: Outcome) -> str:
    if not outcome.changed:
        return f"{outcome.operation} {outcome.stack}: no changes"
    counts = ", ".join(
        f"{kind} {count}" for kind, count in sorted(outcome.changes.items()) if kind != "same"
    )
    return f"{outcome.operation} {outcome.stack}: {counts}"


def _report(outcome: Outcome, output: str) -> None:
    document = {
        "operation": outcome.operation,
        "stack": outcome.stack,
        "changes": outcome.changes,
        "outputs": outcome.public_outputs(),
    }

    def text() -> None:
        click.echo(_summary(outcome))
        for name, value in outcome.public_outputs().items():
            click.echo(f"{name}: {'' if value is None else value}")

    emit(document, output, table=text)


def _options(function: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        (
            click.option("--stack", required=True, help=STACK_NAME_HELP),
            click.option(
                "--work-dir",
                type=click.Path(file_okay=False, path_type=Path),
                default=PROJECT_ROOT,
                show_default="the project root",
                help="Directory holding Pulumi.yaml and stacks/.",
            ),
            click.option(
                "--backend-url",
                default="",
                show_default="$PULUMI_BACKEND_URL, else file://~ (pulumi login --local)",
                help="State backend.",
            ),
            click.option("-o", "--output", default=Output.table.value, help=OUTPUT_OPTION_HELP),
        )
    ):
        function = option(function)
    return function


def _run(operation: str, stack: str, work_dir: Path, backend_url: str, output: str) -> None:
    check_output(output)
    opts = EngineOptions(stack=stack, work_dir=work_dir.resolve(), backend_url=backend_url)
    _report(run(operation, opts, _progress), output)


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    no_args_is_help=True,
)
def cli() -> None:
    """Run the TauGrid stack program with the Pulumi engine (Automation API, local backend)."""


@cli.command()
@_options
def preview(stack: str, work_dir: Path, backend_url: str, output: str) -> None:
    """Show what `up` would change; nothing is created."""
    _run("preview", stack, work_dir, backend_url, output)


@cli.command()
@_options
def up(stack: str, work_dir: Path, backend_url: str, output: str) -> None:
    """Create or update the stack's resources and print its outputs."""
    _run("up", stack, work_dir, backend_url, output)


@cli.command()
@_options
def destroy(stack: str, work_dir: Path, backend_url: str, output: str) -> None:
    """Delete every resource the stack manages, dependents first (queue objects drain)."""
    _run("destroy", stack, work_dir, backend_url, output)


def main() -> int:
    return run_cli(cli, "python -m infra.automation")


if __name__ == "__main__":
    sys.exit(main())

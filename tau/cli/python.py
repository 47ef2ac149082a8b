"""`tau python SUBCOMMAND [ARGS...]`: the Python SDK's commands, passed through unparsed.

Flag parsing is off: everything after the subcommand goes to `python -m tau.sdk.cli`,
run by `$TAU_PYTHON` (an interpreter that has the workflow module's imports) or else the
interpreter tau itself runs on, with this process's stdio; its exit status is tau's.
"""

from __future__ import annotations

import os
import subprocess
import sys

import click

from tau import keys
from tau.errors import UsageError

SUBCOMMANDS = ("inspect", "build", "submit", "submit-build", "bootstrap", "doctor")
HELP = """Author decorator-based @tau.train / @tau.eval workflows (optional; standard tau.yaml
projects do not need the Python SDK).

\b
  tau python inspect MODULE          a module's workflows and manifests
  tau python build MODULE --out DIR  write the manifests and trainers
  tau python submit MODULE           build and submit (train, then evals)
  tau python submit-build DIR        submit a build directory
  tau python bootstrap [DIR]         write a starter workflow.py
  tau python doctor [MODULE]         check the interpreter, tau and a module

Each subcommand takes --help. Set TAU_PYTHON to run them with another interpreter."""


def interpreter() -> str:
    return os.environ.get(keys.ENV_PYTHON) or sys.executable


def run(args: tuple[str, ...]) -> None:
    if not args or args[0] in ("-h", "--help"):
        click.echo(click.Context(app).get_help())
        return
    if args[0] not in SUBCOMMANDS:
        raise UsageError(
            f"tau python has no subcommand {args[0]!r}; use one of: {', '.join(SUBCOMMANDS)}"
        )
    python = interpreter()
    try:
        code = subprocess.run([python, "-m", "tau.sdk.cli", *args], check=False).returncode
    except OSError as error:
        raise UsageError(
            f"{keys.ENV_PYTHON}={python} cannot run ({error.strerror or error})",
            hint="point TAU_PYTHON at a Python 3.11+ interpreter with taugrid installed",
        ) from None
    if code:
        raise SystemExit(code)


app = click.Command(
    "python",
    callback=run,
    params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
    help=HELP,
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)

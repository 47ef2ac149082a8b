"""examples/aks-cpu-quickstart: run.sh and cleanup.sh run exactly the README's commands.

The docs promise that run.sh "sequences only the commands documented in that README". Azure
cannot be reached here, so the commands are not run; instead each script must equal its README
blocks, be valid bash, and every `tau` command in them must parse against the real CLI (the
flags exist and take the values given), so a renamed flag breaks this test, not the reader.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import warnings
from pathlib import Path

import click
import pytest

from tau.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "aks-cpu-quickstart"
README = (EXAMPLE / "README.md").read_text()
SCRIPTS = {"run.sh": "Run it", "cleanup.sh": "Clean up"}


def readme_blocks(heading: str) -> str:
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", README, re.S | re.M)
    assert section, f"README.md lost its '## {heading}' section"
    return "".join(re.findall(r"```bash\n(.*?)```", section.group(1), re.S))


def script_body(name: str) -> str:
    text = (EXAMPLE / name).read_text()
    header, _, body = text.partition('cd "$(dirname "$0")/../.."\n')
    assert header.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in header
    return body.lstrip("\n")


def parse(argv: list[str]) -> click.Command:
    """The command `tau ARGV` would invoke, its options parsed and checked, without running it."""
    command: click.Command = cli
    ctx = command.make_context("tau", list(argv))
    while isinstance(command, click.Group):
        with warnings.catch_warnings():  # Click 9 moves protected_args into args
            warnings.simplefilter("ignore", DeprecationWarning)
            rest = [*ctx.protected_args, *ctx.args]
        if not rest:
            break
        name, found, rest = command.resolve_command(ctx, rest)
        assert found is not None and name is not None
        command, ctx = found, found.make_context(name, rest, parent=ctx)
    return command


@pytest.mark.parametrize("name", SCRIPTS)
def test_the_script_is_its_readme_blocks_in_order_and_valid_bash(name: str):
    assert script_body(name) == readme_blocks(SCRIPTS[name])
    assert subprocess.run(["bash", "-n", str(EXAMPLE / name)], check=False).returncode == 0
    assert (EXAMPLE / name).stat().st_mode & 0o111, f"{name} is executable"


TAU_LINES = [
    line for name in SCRIPTS for line in script_body(name).splitlines() if line.startswith("tau ")
]


@pytest.mark.parametrize("line", TAU_LINES)
def test_every_tau_command_in_the_scripts_parses_against_the_cli(line: str):
    parse(shlex.split(line)[1:])


def test_the_scripts_cover_the_whole_round_trip():
    verbs = [" ".join(shlex.split(line)[1:3]) for line in TAU_LINES]
    assert verbs[:2] == ["cluster install", "cluster validate"]
    assert "workspace create" in verbs and "run --config" in verbs
    assert "az group delete" in script_body("cleanup.sh")

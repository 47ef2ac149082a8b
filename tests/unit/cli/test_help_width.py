"""Every `--help` reads whole on an 80-column terminal: nothing cut, examples kept as written."""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest

from tau.cli.helptext import keep_example_blocks
from tau.cli.main import ROOTS, cli


def commands() -> Iterator[tuple[str, click.Command]]:
    def walk(command: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                if sub is not None:
                    yield from walk(sub, f"{path} {name}")

    for root in ROOTS:
        command = cli.get_command(click.Context(cli), root)
        assert command is not None
        yield from walk(command, f"tau {root}")


HELP = list(commands())


@pytest.mark.parametrize(("path", "command"), HELP, ids=[path for path, _ in HELP])
def test_help_fits_80_columns_without_cutting_anything(path: str, command: click.Command) -> None:
    context = click.Context(command, info_name=path, terminal_width=80, max_content_width=80)
    text = command.get_help(context)
    too_wide = [line for line in text.splitlines() if len(line) > 80]
    assert too_wide == []
    assert "…" not in text


def test_indented_example_lines_are_printed_as_written() -> None:
    @click.command(help="Do it.\n\nExamples:\n\n  tau x one   # first\n  tau x two   # second")
    def sample() -> None:
        pass

    keep_example_blocks(sample)
    text = sample.get_help(click.Context(sample, info_name="tau x", terminal_width=80))
    assert "    tau x one   # first\n    tau x two   # second\n" in text

"""Help that stays readable at 80 columns: click's plain formatter, example blocks kept whole.

Rich's boxed help cut option names and defaults on an 80-column terminal, so every app uses
click's formatter, which wraps instead. That formatter also re-flows indented example lines
into one paragraph; a block whose every line is indented (command examples, tables) is marked
with click's `\\b` so it is printed as written.
"""

from __future__ import annotations

import click


def keep_example_blocks(command: click.Command) -> click.Command:
    """Mark the indented blocks of `command`'s help, and of every subcommand's, verbatim."""
    if command.help:
        command.help = _mark(command.help)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            keep_example_blocks(sub)
    return command


def _mark(text: str) -> str:
    paragraphs = text.split("\n\n")
    return "\n\n".join(_verbatim(p) if _is_block(p) else p for p in paragraphs)


def _is_block(paragraph: str) -> bool:
    lines = [line for line in paragraph.split("\n") if line.strip()]
    return bool(lines) and lines[0] != "\b" and all(line.startswith("  ") for line in lines)


def _verbatim(paragraph: str) -> str:
    return "\b\n" + paragraph.lstrip("\n")

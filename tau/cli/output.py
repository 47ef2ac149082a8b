"""Structured output shared by every command: `-o table|json|yaml`.

Commands build plain data (dicts/lists of JSON-compatible values, or a `tau.cli.documents`
model) and a table description; this module decides how it reaches the terminal so every
verb behaves the same way: json and yaml always print the same document.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from itertools import chain
from typing import TYPE_CHECKING, cast

import typer

from tau.errors import UsageError
from tau.jsontypes import JSONValue

if TYPE_CHECKING:
    from tau.cli.documents import Document


class Output(StrEnum):
    table = "table"
    json = "json"
    yaml = "yaml"


OUTPUT_OPTION_HELP = "Output format: table (human), json or yaml (stable, machine-readable)."


def check_output(output: str, *extra: str) -> str:
    """Refuse an `-o` value other than table|json|yaml and the verb's own `extra` forms."""
    allowed = [*Output, *extra]
    if output not in allowed:
        raise UsageError(f"--output must be {', '.join(allowed[:-1])} or {allowed[-1]}")
    return output


def output_option(default: str = Output.table, **extra: str) -> Output:
    """`-o/--output`: table|json|yaml, plus the verb's own forms, `extra` naming what each
    prints (`ref="MODEL@RUN"`); the verb refuses the rest with `check_output(output, *extra)`."""
    forms = "".join(f", or {name} ({what})" for name, what in extra.items())
    help_text = OUTPUT_OPTION_HELP.removesuffix(".") + forms + "."
    # typer.Option returns its OptionInfo typed Any; the parameter it defaults is an Output.
    return cast(
        Output,
        typer.Option(default, "-o", "--output", help=help_text, case_sensitive=False),
    )


def dump_json(data: JSONValue) -> str:
    return json.dumps(data, indent=2, sort_keys=False, default=str, ensure_ascii=False)


def dump_yaml(data: JSONValue) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)


def print_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    title: str | None = None,
) -> None:
    """A kubectl-like borderless table (uppercase headers, no box).

    Piped or redirected, rows are never folded to an assumed 80 columns and carry no
    trailing padding, so `| grep NAME` and `| awk` see one whole row per line. There, plain
    cells (printable ASCII, no rich markup) are aligned here, in rich's exact layout, without
    importing and running rich: it spent 0.3 s CPU on a 1,000-run `tau run list`.
    """
    texts = [[column.upper() for column in columns]]
    texts += [["" if cell is None else str(cell) for cell in row] for row in rows]
    if title is None and not sys.stdout.isatty() and all(map(_plain, chain(*texts))):
        widths = [max(len(row[i]) for row in texts) for i in range(len(columns))]
        sys.stdout.write(
            "".join("  ".join(map(str.ljust, row, widths)).rstrip() + "\n" for row in texts)
        )
        return
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(
        box=box.SIMPLE_HEAD if title else None, title=title, show_edge=False, pad_edge=False
    )
    for column in columns:
        table.add_column(column.upper(), overflow="fold")
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    if sys.stdout.isatty():
        Console(soft_wrap=True).print(table)
        return
    console = Console(soft_wrap=True, width=1_000_000)
    with console.capture() as captured:
        console.print(table)
    sys.stdout.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def _plain(text: str) -> bool:
    """Laid out by rich as is: no markup to parse, no wide, control or line-breaking chars."""
    return text.isascii() and text.isprintable() and "[" not in text


def print_records(columns: Sequence[str], records: Sequence[Mapping[str, object]]) -> None:
    """A table of the named keys of each record (the json/yaml form keeps every key)."""
    print_table(columns, [[record[column] for column in columns] for record in records])


def emit(
    data: JSONValue | Document,
    output: Output | str,
    *,
    table: Callable[[], None] | None = None,
) -> None:
    """Print `data` as json/yaml, or call `table` (defaults to json when none is given)."""
    from tau.cli.documents import Document

    if isinstance(data, Document):
        data = data.dump()
    output = Output(output)
    if output is Output.yaml:
        sys.stdout.write(dump_yaml(data))
    elif output is Output.json or table is None:
        sys.stdout.write(dump_json(data) + "\n")
    else:
        table()

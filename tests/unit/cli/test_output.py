"""Tables piped to another program keep one whole row per line (kubectl-style)."""

from __future__ import annotations

from tau.cli.output import print_table


def test_a_piped_table_never_folds_long_cells_or_pads_line_ends(capsys):
    name = "quickstart-train-with-a-long-descriptive-name-20261129-104410"
    print_table(
        ["name", "experiment", "metrics"],
        [[name, "toy-regression", "accuracy=0.953125 loss=0.0141484"], ["short", "", "x"]],
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[0].split() == ["NAME", "EXPERIMENT", "METRICS"]
    assert lines[1].split() == [name, "toy-regression", "accuracy=0.953125", "loss=0.0141484"]
    assert lines[2].split() == ["short", "x"]
    assert all(line == line.rstrip() for line in lines)


def rich_layout(columns: list[str], rows: list[list[object]]) -> str:
    """The borderless rich table a piped print_table has always printed."""
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, show_edge=False, pad_edge=False)
    for column in columns:
        table.add_column(column.upper(), overflow="fold")
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    console = Console(soft_wrap=True, width=1_000_000)
    with console.capture() as captured:
        console.print(table)
    return "".join(line.rstrip() + "\n" for line in captured.get().splitlines())


def test_a_piped_table_keeps_rich_s_layout_cell_for_cell(capsys):
    tables = [
        (
            ["name", "kind", "status", "age"],
            [["train-1", "Job", "Running", "5m"], ["t", "", None, 3]],
        ),
        (["only"], []),
        (["a b", "c"], [[" lead", "trail "], ["", ""]]),
        # Markup, wide and control characters: rich lays these out itself.
        (["name", "note"], [["[bold]x[/bold]", "é中"], ["tab\there", "two\nlines"]]),
    ]
    for columns, rows in tables:
        print_table(columns, rows)
        assert capsys.readouterr().out == rich_layout(columns, rows), (columns, rows)

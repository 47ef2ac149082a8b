"""One output mechanism: tables piped to another program keep one whole row per line
(kubectl-style), and every read verb prints `-o table|json|yaml`."""

from __future__ import annotations

import click

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


READ_VERBS = {"list", "get", "show", "status", "history", "describe", "ref", "best", "inspect"}


def _read_verbs() -> dict[str, click.Command]:
    """Every `tau ...` command named like a read verb, by its path (a group that runs on its
    own, such as `tau run history NAME`, counts as one)."""
    from tau.cli.main import cli

    found: dict[str, click.Command] = {}

    def walk(command: click.Command, path: str, parent: click.Context | None) -> None:
        ctx = click.Context(command, info_name=path.rsplit(" ", 1)[-1], parent=parent)
        if path.rsplit(" ", 1)[-1] in READ_VERBS:
            found[path] = command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    walk(sub, f"{path} {name}", ctx)

    walk(cli, "tau", None)
    return found


def test_every_read_verb_takes_table_json_and_yaml(tmp_path, monkeypatch, capsys):
    """`-o xml` is refused before any cluster or registry is read, naming the forms the verb
    takes: every read verb's list holds table, json and yaml (its own forms come on top)."""
    from tau.cli.main import run

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "tau-config"))
    monkeypatch.chdir(tmp_path)
    verbs = _read_verbs()
    assert {"tau run history", "tau data dataset ref", "tau data model best"} <= set(verbs)
    missing = []
    for path, command in sorted(verbs.items()):
        names = [p.name for p in command.params if isinstance(p, click.Argument)]
        code = run(command, path, [*("x" for _ in names), "-o", "xml"])
        said = capsys.readouterr().err
        forms = said.split("--output", 1)[-1]
        if code != 2 or not all(form in forms for form in ("table", "json", "yaml")):
            missing.append(f"{path}: exit {code}, {said.strip()}")
    assert not missing, "\n".join(missing)

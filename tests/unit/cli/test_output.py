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

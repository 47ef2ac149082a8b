"""The terminal view of a snapshot: runs, summaries and sparkline-style series (rich)."""

from __future__ import annotations

from typing import Any

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], width: int = 40) -> str:
    if not values:
        return ""
    if len(values) > width:
        size = len(values) / width
        values = [
            sum(chunk) / len(chunk)
            for chunk in (
                values[int(i * size) : max(int((i + 1) * size), int(i * size) + 1)]
                for i in range(width)
            )
        ]
    low, high = min(values), max(values)
    span = high - low
    if span == 0:
        return BLOCKS[3] * len(values)
    return "".join(
        BLOCKS[min(len(BLOCKS) - 1, int((v - low) / span * len(BLOCKS)))] for v in values
    )


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def render(snapshot: dict[str, Any], *, width: int = 40) -> None:
    from rich.console import Console
    from rich.panel import Panel

    console = Console(soft_wrap=True)
    console.print(
        Panel.fit(
            f"[bold]{snapshot['target']}[/bold]  {snapshot['target_type']} · "
            f"{len(snapshot['runs'])} run(s) · {snapshot['store_path']}",
            title="Stellar",
        )
    )
    run_rows = [
        [run["run_id"], run["run_group_id"], run["state"], run["lifecycle"], run["created_at"]]
        for run in snapshot["runs"]
    ]
    runs = ["RUN", "GROUP", "STATE", "LIFECYCLE", "CREATED"]
    console.print(_table("Runs", runs, run_rows, shrinks="CREATED"))
    for metric in snapshot["metrics"]:
        rows = []
        for series in snapshot["series"].get(metric, []):
            summary = snapshot["summaries"].get(series["run_id"], {}).get(metric, {})
            rows.append(
                [
                    series["run_id"],
                    series["y"],
                    _fmt(summary.get("latest_value")),
                    _fmt(summary.get("min_value")),
                    _fmt(summary.get("max_value")),
                    _fmt(summary.get("count")),
                ]
            )
        columns = ["RUN", "SERIES", "LATEST", "MIN", "MAX", "POINTS"]
        # The sparkline takes what the whole-cell columns leave of the terminal width.
        others = sum(_width(columns[i], rows, i) for i in (0, 2, 3, 4, 5))
        fit = max(min(width, console.width - others - 3 * len(columns) - 1), 8)
        for row in rows:
            row[1] = sparkline(row[1], fit)
        console.print(_table(metric, columns, rows))


def _width(header: str, rows: list[list[Any]], index: int) -> int:
    return max([len(header), *(len(str(row[index])) for row in rows)])


def _table(title: str, columns: list[str], rows: list[list[Any]], shrinks: str = "") -> Any:
    """Cells are never cut: run ids and values stay readable on an 80-column terminal or in
    a pipe. Only the `shrinks` column gives way (down to a date); wider content widens the
    table instead."""
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left")
    for index, column in enumerate(columns):
        if column == shrinks:
            table.add_column(column, overflow="ellipsis", min_width=10)
        else:
            table.add_column(column, no_wrap=True, min_width=_width(column, rows, index))
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    return table

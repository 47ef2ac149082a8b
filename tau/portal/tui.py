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
    from rich import box
    from rich.console import Console
    from rich.panel import Panel
    from rich.table import Table

    console = Console(soft_wrap=True)
    console.print(
        Panel.fit(
            f"[bold]{snapshot['target']}[/bold]  {snapshot['target_type']} · "
            f"{len(snapshot['runs'])} run(s) · {snapshot['store_path']}",
            title="Stellar",
        )
    )
    runs = Table(box=box.SIMPLE_HEAD, title="Runs", title_justify="left")
    for column in ("RUN", "GROUP", "STATE", "LIFECYCLE", "CREATED"):
        runs.add_column(column)
    for run in snapshot["runs"]:
        runs.add_row(
            run["run_id"], run["run_group_id"], run["state"], run["lifecycle"], run["created_at"]
        )
    console.print(runs)
    for metric in snapshot["metrics"]:
        table = Table(box=box.SIMPLE_HEAD, title=metric, title_justify="left")
        for column in ("RUN", "SERIES", "LATEST", "MIN", "MAX", "POINTS"):
            table.add_column(column)
        for series in snapshot["series"].get(metric, []):
            summary = snapshot["summaries"].get(series["run_id"], {}).get(metric, {})
            table.add_row(
                series["run_id"],
                sparkline(series["y"], width),
                _fmt(summary.get("latest_value")),
                _fmt(summary.get("min_value")),
                _fmt(summary.get("max_value")),
                _fmt(summary.get("count")),
            )
        console.print(table)

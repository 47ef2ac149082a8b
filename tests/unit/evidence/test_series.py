"""Reading series back: finite points in step order, and the bounded envelope for display."""

from __future__ import annotations

import json
import math
from pathlib import Path

from tau.evidence import ImportRequest, Store, import_jsonl, init_experiment
from tau.evidence.series import read_series


def _store(tmp_path: Path, values: list[float], steps: list[int]) -> Store:
    root = tmp_path / "store"
    init_experiment(root, "s")
    history = tmp_path / "h.jsonl"
    with history.open("w") as handle:
        for step, value in zip(steps, values, strict=True):
            literal = "NaN" if math.isnan(value) else repr(value)
            handle.write(f'{{"_step": {step}, "loss": {literal}}}\n')
    import_jsonl(root, ImportRequest(run_id="r", history=[str(history)]))
    return Store.open(root)


def test_points_come_back_in_step_order_without_non_finite_values(tmp_path: Path) -> None:
    store = _store(tmp_path, [0.3, math.nan, 0.1, 0.2], [3, 4, 1, 2])
    series = read_series(store, ["r"])[("r", "loss")]
    assert (series.steps, series.values) == ([1, 2, 3], [0.1, 0.2, 0.3])
    assert (series.points, series.non_finite) == (3, 1)


def test_the_envelope_bounds_a_long_series_and_keeps_its_extremes_and_ends(tmp_path: Path) -> None:
    n = 100_000
    values = [math.sin(i / 1000) for i in range(n)]
    values[77_777] = 50.0
    values[12_345] = -50.0
    store = _store(tmp_path, values, list(range(n)))

    series = read_series(store, ["r"], ["loss"], envelope=100)[("r", "loss")]

    assert series.points == n and len(series.steps) <= 400
    assert series.steps[0] == 0 and series.steps[-1] == n - 1
    assert series.steps == sorted(series.steps)
    assert {50.0, -50.0} <= set(series.values)
    assert json.dumps(series.values)  # finite, serializable

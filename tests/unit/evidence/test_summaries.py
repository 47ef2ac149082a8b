"""Per-metric summaries: NaN/Inf counted apart, latest-finite ordering, folded exactly once."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.evidence import RunRecord, Store, TrackRequest, init_experiment, track_run
from tau.evidence.points import ensure_summaries, from_rows, write_metric_file
from tau.evidence.summaries import fold, summarize

from .helpers import rows

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def point(name: str, value: float, step: int | None, second: int | None = 0) -> dict[str, Any]:
    return {
        "project": "p",
        "run_group_id": "g",
        "run_id": "r",
        "metric_name": name,
        "step": step,
        "wall_time": None if second is None else T0.replace(second=second),
        "value": value,
        "unit": None,
        "source": "test",
        "split": None,
        "tags": "{}",
    }


def test_nan_and_inf_only_count_as_non_finite() -> None:
    found = summarize(
        from_rows(
            [
                point("loss", 0.9, 1),
                point("loss", math.nan, 2),
                point("loss", math.inf, 3),
                point("loss", -math.inf, 4),
                point("loss", 0.4, 5, 1),
                point("loss", 2.0, 0, 2),
            ]
        )
    )["loss"]

    assert (found.count, found.finite_count, found.non_finite_count) == (6, 3, 3)
    assert (found.min_value, found.max_value) == (0.4, 2.0)
    assert (found.latest_step, found.latest_value) == (5, 0.4)
    assert (found.min_step, found.max_step) == (0, 5)


def test_an_all_nan_metric_has_no_latest_min_or_max() -> None:
    found = summarize(from_rows([point("loss", math.nan, 1), point("loss", math.nan, 2)]))["loss"]

    assert (found.count, found.non_finite_count) == (2, 2)
    assert (found.latest_value, found.min_value, found.max_value, found.latest_step) == (None,) * 4


def test_latest_prefers_stepped_rows_then_higher_step_then_later_wall_time_then_row_order() -> None:
    stepless_late = point("m", 100.0, None, 59)
    found = summarize(
        from_rows(
            [point("m", 1.0, 7, 5), stepless_late, point("m", 2.0, 7, 9), point("m", 3.0, 6, 30)]
        )
    )["m"]
    assert (found.latest_step, found.latest_value) == (7, 2.0)

    ties = summarize(from_rows([point("m", 1.0, 3, 5), point("m", 2.0, 3, 5)]))["m"]
    assert ties.latest_value == 2.0  # same step and time: the later row wins

    only_stepless = summarize(from_rows([point("m", 5.0, None, 1), point("m", 6.0, None, 0)]))["m"]
    assert (only_stepless.latest_step, only_stepless.latest_value) == (None, 5.0)


def test_names_are_trimmed_and_empty_names_skipped() -> None:
    found = summarize(from_rows([point(" loss ", 1.0, 1), point("  ", 2.0, 1)]))
    assert list(found) == ["loss"]


def test_files_merge_incrementally_and_a_file_is_never_folded_twice(store_root: Path) -> None:
    init_experiment(store_root, "exp")
    store = Store.open(store_root)
    with store.mutate() as txn:
        write_metric_file(
            txn,
            from_rows([point("loss", 0.5, 10), point("loss", math.nan, 11)]),
            rel_path="metrics/a.parquet",
            file_id="a",
            project="p",
            run_group_id="g",
            run_id="r",
        )
        write_metric_file(
            txn,
            from_rows([point("loss", 0.8, 4), point("loss", 0.1, 2)]),
            rel_path="metrics/b.parquet",
            file_id="b",
            project="p",
            run_group_id="g",
            run_id="r",
        )
        again = fold(txn, summarize(from_rows([point("loss", 9.0, 99)])), file_id="a", run_id="r")

    assert again is False
    summary = rows(
        store_root,
        "SELECT count, finite_count, non_finite_count, min_step, max_step, "
        "latest_step, latest_value, min_value, max_value, latest_file_id "
        "FROM metric_summaries WHERE run_id='r' AND metric_name='loss'",
    )
    assert summary == [(4, 3, 1, 2, 11, 10, 0.5, 0.1, 0.8, "a")]


def test_backfill_summarizes_unsummarized_files_once(store_root: Path) -> None:
    init_experiment(store_root, "exp")
    track_run(store_root, TrackRequest(run=RunRecord(run_id="r1"), metrics={"loss": 0.25}, step=4))
    with Store.open(store_root).mutate() as txn:  # simulate a file indexed before summaries existed
        txn.db.execute("DELETE FROM metric_summaries")
        txn.db.execute("DELETE FROM metric_summary_files")

    assert ensure_summaries(Store.open(store_root)) == []
    assert ensure_summaries(Store.open(store_root)) == []

    assert rows(store_root, "SELECT count, latest_value, latest_step FROM metric_summaries") == [
        (1, 0.25, 4)
    ]

"""`import jsonl`: W&B-style history into Parquet + summaries, with the edge cases pinned."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tau.errors import ValidationError
from tau.evidence import ImportRequest, import_jsonl, init_experiment

from .helpers import rows

HISTORY = [
    {
        "_step": step,
        "_timestamp": 1760000000.125 + step,
        "loss": 1 / (step + 1),
        "accuracy": step / 6,
        "lr": 0.1,
        "note": "text",
        "done": False,
        "nested": {"a": 1},
        "_runtime": 3,
    }
    for step in range(6)
]


@pytest.fixture
def store(store_root: Path) -> Path:
    init_experiment(store_root, "exp", project="proj")
    return store_root


def test_a_small_history_becomes_one_parquet_file_a_copied_artifact_and_summaries(
    store: Path, write_history
) -> None:
    history = write_history(HISTORY)
    result = import_jsonl(
        store, ImportRequest(run_id="r1", history=[str(history)], experiment="exp", group="g1")
    )

    assert result["rows"] == 18 and result["reused"] is False
    files = list((store / "metrics").rglob("*.parquet"))
    assert [f.relative_to(store).as_posix() for f in files] == [result["metric_file"]]
    assert result["metric_file"].startswith(
        "metrics/project=proj/experiment=exp/group=g1/run=r1/jsonl-"
    )
    table = pq.read_table(files[0])
    assert table.column_names == [
        "project",
        "run_group_id",
        "run_id",
        "metric_name",
        "step",
        "wall_time",
        "value",
        "unit",
        "source",
        "split",
        "tags",
    ]
    first = table.slice(0, 1).to_pylist()[0]
    assert (first["metric_name"], first["step"], first["value"], first["source"]) == (
        "loss",
        0,
        1.0,
        "jsonl",
    )
    assert first["wall_time"].timestamp() == pytest.approx(1760000000.125)
    tags = json.loads(first["tags"])
    assert tags["jsonl.history_line"] == "1" and tags["jsonl.raw_key"] == "loss"
    assert tags["jsonl.importer"] == "tau.jsonl.import.v1" and "tau.metric.card" in tags

    copies = list((store / "artifacts" / "r1" / "jsonl").iterdir())
    assert len(copies) == 1 and copies[0].read_bytes() == history.read_bytes()
    artifact = rows(store, "SELECT artifact_id, type, preview FROM artifacts")
    assert artifact[0][0].startswith("jsonl-history-r1-") and artifact[0][1] == "metrics-jsonl"
    assert json.loads(artifact[0][2])["kind"] == "jsonl_history"
    assert rows(
        store, "SELECT metric_name, count, latest_step FROM metric_summaries ORDER BY 1"
    ) == [("accuracy", 6, 5), ("loss", 6, 5), ("lr", 6, 5)]


def test_reimporting_the_same_content_is_reused(store: Path, write_history) -> None:
    history = write_history(HISTORY)
    import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))
    again = import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))

    assert again["reused"] is True
    assert rows(store, "SELECT COUNT(*), SUM(row_count) FROM metric_files") == [(1, 18)]
    assert rows(store, "SELECT SUM(count) FROM metric_summaries") == [(18,)]


def test_an_overflowing_literal_is_an_error_that_says_finite(store: Path, write_history) -> None:
    history = write_history(['{"_step": 1, "loss": 0.5}', '{"_step": 2, "loss": 1e309}'])
    with pytest.raises(ValidationError, match=r":2: value 1e309 must be a finite number"):
        import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))
    assert rows(store, "SELECT COUNT(*) FROM runs") == [(0,)]


def test_no_scalar_anywhere_is_fatal(store: Path, write_history) -> None:
    history = write_history([{"_step": 1, "note": "x", "ok": True}, {"_step": 2, "_runtime": 4}])
    with pytest.raises(ValidationError, match="contain no scalar metrics"):
        import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))


def test_float_steps_truncate_blank_lines_skip_and_nan_tokens_count_as_non_finite(
    store: Path, write_history
) -> None:
    history = write_history(
        [
            '{"_step": 1.9, "loss": 0.5}',
            "",
            "   ",
            '{"_step": 2, "loss": NaN}',
            '{"_step": 3, "loss": 0.25, "flag": true, "s": "x"}',
        ]
    )
    import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))

    assert rows(
        store,
        "SELECT count, non_finite_count, min_step, latest_step, latest_value FROM metric_summaries",
    ) == [(3, 1, 1, 3, 0.25)]
    table = pq.read_table(next((store / "metrics").rglob("*.parquet")))
    lines = [json.loads(t)["jsonl.history_line"] for t in table["tags"].to_pylist()]
    assert lines == ["1", "4", "5"]
    assert math.isnan(table["value"][1].as_py())


def test_the_fast_and_exact_parsers_store_the_same_points(store: Path, write_history) -> None:
    clean = write_history(HISTORY, "clean.jsonl")
    spaced = write_history(
        [json.dumps(r) for r in HISTORY[:3]] + [""] + [json.dumps(r) for r in HISTORY[3:]],
        "spaced.jsonl",
    )
    import_jsonl(store, ImportRequest(run_id="fast", history=[str(clean)]))
    import_jsonl(store, ImportRequest(run_id="exact", history=[str(spaced)]))

    def points(run: str) -> list[tuple]:
        table = pq.read_table(next((store / "metrics").rglob(f"run={run}/*.parquet")))
        return list(
            zip(
                table["metric_name"].to_pylist(),
                table["step"].to_pylist(),
                table["wall_time"].to_pylist(),
                table["value"].to_pylist(),
                strict=True,
            )
        )

    assert points("fast") == points("exact")


def test_prefix_tags_and_custom_fields(store: Path, write_history) -> None:
    history = write_history([{"iter": 5, "t": 1760000000, "loss": 0.1}])
    import_jsonl(
        store,
        ImportRequest(
            run_id="r1",
            history=[str(history)],
            metric_prefix="train/",
            step_field="iter",
            time_field="t",
            tags={"team": "a"},
        ),
    )
    assert rows(store, "SELECT metric_name, latest_step FROM metric_summaries") == [
        ("train/loss", 5)
    ]
    assert ("team", "a") in rows(store, "SELECT key, value FROM tags WHERE scope_id='r1'")


def test_dry_run_reports_rows_and_writes_nothing(store: Path, write_history) -> None:
    history = write_history(HISTORY)
    before = sorted(p.relative_to(store) for p in store.rglob("*") if "sqlite" not in p.name)

    result = import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)], dry_run=True))

    assert result["rows"] == 18 and result["metrics"] == ["accuracy", "loss", "lr"]
    assert (
        sorted(p.relative_to(store) for p in store.rglob("*") if "sqlite" not in p.name) == before
    )
    assert rows(store, "SELECT COUNT(*) FROM runs") == [(0,)]


def test_a_glob_that_matches_nothing_names_the_flag(store: Path) -> None:
    with pytest.raises(ValidationError, match="--history"):
        import_jsonl(store, ImportRequest(run_id="r1", history=[str(store / "none-*.jsonl")]))

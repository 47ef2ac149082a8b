"""Read side: read-only SQL, list/status counts, lifecycle classification, search."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.errors import UsageError, ValidationError
from tau.evidence import RunRecord, Store, TrackRequest, init_experiment, track_run
from tau.evidence.ids import check_id, slug
from tau.evidence.query import (
    RunQuery,
    list_records,
    parse_metric_filter,
    parse_since,
    run_sql,
    search_runs,
    status,
)

from .helpers import rows


def track(
    root: Path,
    run: str,
    *,
    metrics: dict[str, float] | None = None,
    step: int | None = None,
    **fields,
) -> None:
    tags = fields.pop("tags", {})
    track_run(
        root,
        TrackRequest(
            run=RunRecord(run_id=run, tags=tags, **fields), metrics=metrics or {}, step=step
        ),
    )


@pytest.fixture(scope="module")
def lifecycle_store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """One run per plain state, plus two "succeeded" runs that fail a success gate (read-only)."""
    store_root = tmp_path_factory.mktemp("lifecycle") / "store"
    init_experiment(store_root, "exp")
    track(store_root, "pending-1", state="pending", run_group_id="g")
    track(store_root, "running-1", state="running", run_group_id="g")
    track(store_root, "failed-1", state="failed", run_group_id="g", metrics={"loss": 1.0}, step=5)
    track(store_root, "ok-1", state="succeeded", run_group_id="g", metrics={"loss": 0.2}, step=100)
    track(
        store_root,
        "collapsed",
        state="succeeded",
        run_group_id="g",
        metrics={"loss": 0.1, "collapse_bad_steps": 3},
        step=100,
    )
    track(
        store_root,
        "short",
        state="succeeded",
        run_group_id="h",
        metrics={"loss": 0.3},
        step=10,
        tags={"tau.success.min_step": "50"},
    )
    return Store.open(store_root)


@pytest.mark.parametrize(
    ("lifecycle", "expected"),
    [
        ("incomplete", ["collapsed", "short"]),
        ("pending", ["pending-1"]),
        ("running", ["running-1"]),
        ("failed", ["failed-1"]),
        ("succeeded", ["ok-1"]),
    ],
)
def test_lifecycle_search_applies_success_gates(
    lifecycle_store: Store, lifecycle: str, expected: list[str]
) -> None:
    found = search_runs(lifecycle_store, RunQuery(lifecycle=lifecycle))
    assert sorted(r["run_id"] for r in found["runs"]) == expected
    assert found["schema"] == "tau.exp.run_search.v0"


def test_a_query_equal_to_a_metric_name_finds_the_run_that_logged_it(
    lifecycle_store: Store,
) -> None:
    found = search_runs(lifecycle_store, RunQuery(query="collapse_bad_steps"))
    assert [r["run_id"] for r in found["runs"]] == ["collapsed"]


def test_metric_filters_select_on_summary_fields(lifecycle_store: Store) -> None:
    found = search_runs(
        lifecycle_store,
        RunQuery(
            metric_filters=[
                parse_metric_filter("loss<0.25"),
                parse_metric_filter("loss@max_step>=100"),
            ]
        ),
    )
    assert sorted(r["run_id"] for r in found["runs"]) == ["collapsed", "ok-1"]
    with pytest.raises(UsageError, match="metric-filter"):
        parse_metric_filter("loss@median>1")


def test_list_and_status_report_counts(lifecycle_store: Store) -> None:
    assert len(list_records(lifecycle_store, "runs")) == 6
    groups = {g["run_group_id"]: g["runs"] for g in list_records(lifecycle_store, "groups")}
    assert groups == {"default": 0, "g": 5, "h": 1}
    assert [e["experiment_id"] for e in list_records(lifecycle_store, "experiments")] == ["exp"]

    report = status(lifecycle_store, "g")
    assert report["target_type"] == "run_group" and report["runs"] == 5
    assert report["state_counts"] == {"pending": 1, "running": 1, "failed": 1, "succeeded": 2}
    assert report["lifecycle_counts"] == {
        "pending": 1,
        "running": 1,
        "failed": 1,
        "succeeded": 1,
        "incomplete": 1,
    }
    assert report["metric_files"] == 3 and report["artifacts"] == 0 and report["configs"] == 0
    assert status(lifecycle_store, "short")["target_type"] == "run"
    with pytest.raises(ValidationError, match="not a run group, run or experiment"):
        status(lifecycle_store, "nothing")


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM runs",
        "UPDATE runs SET state='x'",
        "DROP TABLE runs",
        "PRAGMA journal_mode=DELETE",
        "SELECT 1; DELETE FROM runs",
        "ATTACH DATABASE 'x.db' AS x",
        "INSERT INTO tags VALUES ('a','b','c','d')",
        "WITH x AS (SELECT 1) DELETE FROM runs",
        "SELECT * FROM pragma_table_info('runs')",
        "",
    ],
)
def test_sql_refuses_anything_that_is_not_one_read_only_query(
    lifecycle_store: Store, sql: str
) -> None:
    with pytest.raises(UsageError):
        run_sql(lifecycle_store, sql)
    assert rows(lifecycle_store.root, "SELECT COUNT(*) FROM runs") == [(6,)]


def test_sql_runs_select_and_with_queries(lifecycle_store: Store) -> None:
    result = run_sql(
        lifecycle_store, "SELECT state, COUNT(*) AS n FROM runs GROUP BY state ORDER BY state;"
    )
    assert result["columns"] == ["state", "n"]
    assert ["succeeded", 3] in result["rows"]
    cte = run_sql(
        lifecycle_store,
        "WITH s AS (SELECT run_id FROM runs WHERE state='failed') SELECT run_id FROM s",
    )
    assert cte["rows"] == [["failed-1"]]


def test_titles_slug_into_ids_and_bad_ids_are_rejected() -> None:
    assert slug("NanoGPT API surface") == "nanogpt-api-surface"
    for bad in ("Upper", "-lead", "trail-", "a/b", "sp ace", ""):
        with pytest.raises(ValidationError):
            check_id("run", bad)
    assert check_id("run", "a.b_c-1") == "a.b_c-1"


def test_since_accepts_durations_days_and_rfc3339() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    assert parse_since("36h", now=now) == "2026-03-09T00:00:00Z"
    assert parse_since("2d", now=now) == "2026-03-08T12:00:00Z"
    assert parse_since("2026-03-01T00:00:00Z", now=now) == "2026-03-01T00:00:00Z"
    with pytest.raises(UsageError, match="--since"):
        parse_since("yesterday", now=now)

"""The model registry on a temporary data root: index, list, best, aliases and resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.data import layout, models
from tau.data.refs import ModelRef, parse_model
from tau.data.root import DirectoryRoot
from tau.errors import RuntimeFailure, UsageError

CLOCK = "2026-07-16T10:00:00Z"


def clock() -> str:
    return CLOCK


@pytest.fixture
def root(tmp_path: Path) -> DirectoryRoot:
    return DirectoryRoot(tmp_path)


def leave(root: DirectoryRoot, run: str, name: str, data: object, runs: str = "finetunes") -> None:
    path = root.directory / "checkpoints" / runs / run / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_rebuild_indexes_every_run_that_left_metrics_or_a_record(root) -> None:
    leave(root, "run-a", "metrics.json", {"loss": 0.9, "eval": {"accuracy": 0.7}})
    leave(root, "run-b", "metrics.json", {"loss": 0.4}, runs="workflows")
    leave(root, "run-c", "model.json", {"model": "bert", "run": "run-c", "metrics": {"score": 3}})
    (root.directory / "checkpoints/finetunes/empty").mkdir()
    rows, warnings = models.rebuild(root, namespace="research", clock=clock)
    assert warnings == []
    assert sorted((r.model, r.run) for r in rows) == [
        ("bert", "run-c"),
        ("unknown", "run-a"),
        ("unknown", "run-b"),
    ]
    row = json.loads((root.directory / layout.model_run("unknown", "run-a")).read_text())
    assert row["kind"] == "tau.model" and row["schema_version"] == 1
    assert row["metrics"] == {"loss": 0.9, "eval.accuracy": 0.7}
    assert row["primary_metric"] == {"name": "loss", "value": 0.9, "direction": "lower"}
    assert row["metrics_path"] == "/data/checkpoints/finetunes/run-a/metrics.json"
    assert row["registry_path"] == "/data/model-registry/models/unknown/runs/run-a.json"
    assert row["namespace"] == "research"
    bert = models.get_row(root, "bert", "run-c")
    assert bert.primary_metric.name == "score" and bert.primary_metric.direction == "higher"


def test_rebuild_with_a_model_name_files_runs_under_it_and_skips_bad_names(root) -> None:
    leave(root, "run-a", "metrics.json", {"loss": 1})
    leave(root, "Bad_Name", "metrics.json", {"loss": 1})
    rows, warnings = models.rebuild(root, model="demo", clock=clock)
    assert [(r.model, r.run) for r in rows] == [("demo", "run-a")]
    assert warnings == ["skipping /data/checkpoints/finetunes/Bad_Name: not a registry run name"]


def test_rebuild_of_one_run_that_left_nothing_says_so(root) -> None:
    (root.directory / "checkpoints/finetunes/run-a").mkdir(parents=True)
    with pytest.raises(RuntimeFailure, match="run run-a left nothing to index"):
        models.rebuild(root, run="run-a", clock=clock)


def test_best_picks_the_lowest_loss_and_the_highest_accuracy(root) -> None:
    leave(root, "run-a", "metrics.json", {"loss": 0.9, "accuracy": 0.8})
    leave(root, "run-b", "metrics.json", {"loss": 0.4, "accuracy": 0.6})
    models.rebuild(root, model="demo", clock=clock)
    assert models.best(root, "demo").run == "run-b"
    assert models.best(root, "demo", metric="accuracy").run == "run-a"
    assert models.best(root, "demo", metric="loss", direction="higher").run == "run-a"


def test_best_refuses_runs_that_disagree_on_the_primary_metric(root) -> None:
    leave(root, "run-a", "metrics.json", {"loss": 0.9})
    leave(root, "run-b", "metrics.json", {"accuracy": 0.6})
    models.rebuild(root, model="demo", clock=clock)
    with pytest.raises(
        UsageError, match=r"different primary metrics.*pass --metric and --direction"
    ):
        models.best(root, "demo")


def test_best_of_an_unknown_model_or_metric_is_an_error(root) -> None:
    with pytest.raises(RuntimeFailure, match="model demo has no runs"):
        models.best(root, "demo")
    leave(root, "run-a", "metrics.json", {"loss": 0.9})
    models.rebuild(root, model="demo", clock=clock)
    with pytest.raises(RuntimeFailure, match="no run of model demo has metric 'bleu'"):
        models.best(root, "demo", metric="bleu")
    with pytest.raises(UsageError, match="--direction must be one of: lower, higher"):
        models.best(root, "demo", direction="down")


def test_list_filters_and_sorts_by_metric(root) -> None:
    leave(root, "run-a", "model.json", {"model": "demo", "run": "run-a", "tags": {"lr": "hi"}})
    leave(root, "run-a", "metrics.json", {"loss": 0.9})
    leave(root, "run-b", "metrics.json", {"loss": 0.4})
    leave(root, "run-c", "metrics.json", {"accuracy": 1})
    models.rebuild(root, model="demo", clock=clock)
    rows, _ = models.list_rows(root, model="demo", metric="loss")
    assert [r.run for r in rows] == ["run-b", "run-a"]
    rows, _ = models.list_rows(root, metric="loss", sort="desc")
    assert [r.run for r in rows] == ["run-a", "run-b"]
    assert [r.run for r in models.list_rows(root, tags={"lr": "hi"})[0]] == ["run-a"]
    with pytest.raises(UsageError, match="--sort must be one of: asc, desc"):
        models.list_rows(root, sort="up")


def test_show_takes_model_slash_run_or_a_run_unique_across_models(root) -> None:
    leave(root, "run-a", "metrics.json", {"loss": 1})
    models.rebuild(root, model="demo", clock=clock)
    assert models.show(root, "demo/run-a").run == "run-a"
    assert models.show(root, "run-a").model == "demo"
    models.rebuild(root, model="other", clock=clock)
    with pytest.raises(UsageError, match="belongs to several models"):
        models.show(root, "run-a")
    with pytest.raises(UsageError, match="must be MODEL/RUN or RUN"):
        models.show(root, "a/b/c")


def test_aliases_point_at_indexed_runs_only(root) -> None:
    leave(root, "run-a", "metrics.json", {"loss": 1})
    models.rebuild(root, model="demo", clock=clock)
    alias = models.set_alias(root, "demo", "prod", "run-a", clock=clock)
    on_disk = json.loads((root.directory / layout.model_alias("demo", "prod")).read_text())
    assert on_disk == {
        "schema_version": 1,
        "model": "demo",
        "alias": "prod",
        "run": "run-a",
        "record_path": "/data/checkpoints/finetunes/run-a/model.json",
        "updated_at": CLOCK,
    }
    assert models.get_alias(root, "demo", "prod") == alias
    with pytest.raises(RuntimeFailure, match="model demo has no run run-z"):
        models.set_alias(root, "demo", "prod", "run-z")
    with pytest.raises(RuntimeFailure, match="model alias demo:staging is not set"):
        models.get_alias(root, "demo", "staging")


def test_model_references() -> None:
    assert parse_model("demo@run-a") == ModelRef("demo", run="run-a")
    assert parse_model("demo:prod") == ModelRef("demo", alias="prod")
    assert parse_model("demo") == ModelRef("demo", alias="default")
    for bad in ("demo@", ":prod", "Demo", "demo@Run_1"):
        with pytest.raises(UsageError):
            parse_model(bad)


def test_resolve_model_ref_gives_the_checkpoint_of_the_run(root) -> None:
    leave(root, "run-a", "metrics.json", {"loss": 1})
    leave(
        root,
        "run-b",
        "artifacts.json",
        {
            "namespace": "research",
            "artifacts": [
                {
                    "name": "checkpoint",
                    "status": "ready",
                    "durable_path": "/data/checkpoints/finetunes/run-b/artifacts/last.safetensors",
                }
            ],
        },
    )
    models.rebuild(root, model="demo", clock=clock)
    models.set_alias(root, "demo", "default", "run-a", clock=clock)
    by_run = models.resolve_model_ref(root, "demo@run-b")
    assert by_run.checkpoint_path == "/data/checkpoints/finetunes/run-b/artifacts/last.safetensors"
    assert by_run.record.namespace == "research"
    bare = models.resolve_model_ref(root, "demo")
    assert (bare.run, bare.alias, bare.checkpoint_path) == (
        "run-a",
        "default",
        "/data/checkpoints/finetunes/run-a",
    )
    with pytest.raises(RuntimeFailure, match="model alias demo:prod is not set"):
        models.resolve_model_ref(root, "demo:prod")


def test_a_checkpoint_that_is_not_ready_is_refused(root) -> None:
    leave(
        root,
        "run-a",
        "artifacts.json",
        {"artifacts": [{"name": "checkpoint", "status": "uploading", "durable_path": "/data/x"}]},
    )
    models.rebuild(root, model="demo", clock=clock)
    with pytest.raises(RuntimeFailure, match="checkpoint of demo@run-a is not ready"):
        models.resolve_model_ref(root, "demo@run-a")


def test_a_damaged_row_is_a_warning_in_list(root) -> None:
    leave(root, "run-a", "metrics.json", {"loss": 1})
    models.rebuild(root, model="demo", clock=clock)
    (root.directory / layout.model_run("demo", "run-x")).write_text("[]")
    rows, warnings = models.list_rows(root)
    assert [r.run for r in rows] == ["run-a"]
    assert "run-x.json" in warnings[0] and "not a valid ModelRecord" in warnings[0]

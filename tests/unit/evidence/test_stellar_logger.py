"""`tau.stellar`: W&B-shaped history, strict scalars, media artifacts, and sync into the store."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tau import stellar

from .helpers import mirror_lines, rows

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "TAU_GROUP",
        "JOB_NAME",
        "TAU_EXPERIMENT_ID",
        "TAU_EXPERIMENT",
        "TAU_PROJECT",
        "TAU_STELLAR_DIR",
        "TAU_EXP_STORE",
        "TAU_EXP_STORE_ROOT",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_log_writes_wandb_shaped_rows_and_skips_media_only_calls(tmp_path: Path, env) -> None:
    run = stellar.init(project="p", run="r1", dir=tmp_path, store=str(tmp_path / "s"))
    stellar.log({"loss": 0.5, "acc": 1}, step=3)
    stellar.log({"loss": 0.25})
    stellar.log({"table": stellar.Table(rows=[[1, 2]], columns=["a", "b"])}, step=3)

    history = [json.loads(line) for line in run.history_path.read_text().splitlines()]
    assert [sorted(row) for row in history] == [
        ["_step", "_timestamp", "acc", "loss"],
        ["_timestamp", "loss"],
    ]
    assert history[0]["_step"] == 3 and history[0]["loss"] == 0.5
    assert (tmp_path / "r1" / "artifacts" / "table-step-3.json").is_file()


@pytest.mark.parametrize(
    ("value", "error", "text"),
    [
        (True, TypeError, "numeric scalars"),
        ("0.1", TypeError, "numeric scalars"),
        (math.nan, ValueError, "finite"),
        (math.inf, ValueError, "finite"),
    ],
)
def test_log_accepts_only_finite_numeric_scalars(tmp_path: Path, env, value, error, text) -> None:
    stellar.init(project="p", run="r1", dir=tmp_path)
    with pytest.raises(error, match=text):
        stellar.log({"loss": value})


def test_defaults_come_from_the_environment_and_explicit_arguments_win(tmp_path: Path, env) -> None:
    env.setenv("JOB_NAME", "sweep-abc-123")
    env.setenv("TAU_EXPERIMENT", "from-env")
    run = stellar.init(project="p", dir=tmp_path)
    assert (run.group, run.experiment_id) == ("sweep", "from-env")

    env.setenv("TAU_GROUP", "g-env")
    env.setenv("TAU_EXPERIMENT_ID", "id-env")
    run = stellar.init(project="p", dir=tmp_path)
    assert (run.group, run.experiment_id) == ("g-env", "id-env")

    run = stellar.init(project="p", group="mine", experiment_id="exp-x", dir=tmp_path)
    assert (run.group, run.experiment_id) == ("mine", "exp-x")

    env.setenv("TAU_RUN_NAME", "engine-run-7")
    assert stellar.init(project="p", dir=tmp_path).name == "engine-run-7"
    assert stellar.init(project="p", run="mine", dir=tmp_path).name == "mine"

    env.delenv("TAU_EXPERIMENT_ID")
    env.delenv("TAU_EXPERIMENT")
    assert stellar.init(
        project="p", experiment="NanoGPT API surface", dir=tmp_path
    ).experiment_id == ("nanogpt-api-surface")
    assert stellar.init(project="proj", dir=tmp_path).experiment_id == "proj"


def test_finish_syncs_the_packet_into_the_store_and_a_second_sync_changes_nothing(
    tmp_path: Path, env
) -> None:
    store = tmp_path / "store"
    report = tmp_path / "report.html"
    report.write_text("<p>eval</p>")
    run = stellar.init(
        project="demo",
        run="r1",
        experiment="Toy Regression",
        group="base",
        config={"lr": 0.1},
        dir=tmp_path / "packets",
        store=str(store),
    )
    for step in range(5):
        stellar.log({"loss": 1 / (step + 1), "accuracy": step / 5}, step=step)
    stellar.log_artifact(report, name="eval", step=4)
    result = stellar.finish()

    assert result == {"store": str(store), "run": "r1", "rows": 10}
    assert rows(store, "SELECT experiment_id, description FROM experiments") == [
        ("toy-regression", "Toy Regression")
    ]
    assert rows(store, "SELECT run_id, project, run_group_id, experiment_id, state FROM runs") == [
        ("r1", "demo", "base", "toy-regression", "succeeded")
    ]
    assert rows(
        store, "SELECT metric_name, count, latest_value FROM metric_summaries ORDER BY 1"
    ) == [("accuracy", 5, 0.8), ("loss", 5, 0.2)]
    assert ("eval-step-4.html", "report") in rows(store, "SELECT name, type FROM artifacts")
    assert (store / "artifacts" / "r1" / "eval-step-4.html").read_text() == "<p>eval</p>"
    assert json.loads(rows(store, "SELECT normalized_json FROM configs")[0][0]) == {"lr": 0.1}
    assert ("source", "stellar-python") in rows(store, "SELECT key, value FROM tags")

    mirrors = {
        f: mirror_lines(store, f) for f in ("runs", "metric_files", "artifacts", "experiments")
    }
    run.sync()
    assert {f: mirror_lines(store, f) for f in mirrors} == mirrors


def test_use_artifact_fetches_another_runs_output_and_records_the_lineage(
    tmp_path: Path, env
) -> None:
    store = str(tmp_path / "store")
    weights = tmp_path / "model.ckpt"
    weights.write_bytes(b"w")
    stellar.init(project="p", run="producer", dir=tmp_path, store=store)
    stellar.log_artifact(weights, alias="best")
    stellar.finish()

    consumer = stellar.init(project="p", run="consumer", dir=tmp_path, store=store)
    local = stellar.use_artifact("best")
    stellar.finish()

    assert local.read_bytes() == b"w" and local.name == "input-model.ckpt"
    assert rows(
        tmp_path / "store", "SELECT direction, source_run_id FROM artifacts WHERE run_id='consumer'"
    ) == [("input", "producer")]
    assert consumer.finished


def test_the_quickstart_example_writes_evidence_that_search_finds(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAU_")}
    env["TAU_EXP_STORE"] = str(tmp_path / "store")
    env["TAU_OUTPUT_DIR"] = str(tmp_path / "out")
    train = subprocess.run(
        [sys.executable, str(REPO / "examples" / "quickstart" / "train.py"), "--steps", "100"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert train.returncode == 0, train.stderr
    search = subprocess.run(
        [
            sys.executable,
            "-m",
            "tau.portal",
            "experiment",
            "search",
            "-q",
            "toy-regression",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert search.returncode == 0, search.stderr
    found = json.loads(search.stdout)["runs"]
    assert len(found) == 1
    assert found[0]["experiment_id"] == "toy-regression" and found[0]["run_group_id"] == "baseline"
    assert found[0]["metrics"]["loss"]["latest_step"] == 100
    assert found[0]["metrics"]["loss"]["latest"] < found[0]["metrics"]["loss"]["max"]

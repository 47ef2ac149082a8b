"""`experiment track`: run records, metrics, configs, artifacts; reuse and conflicts."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tau.evidence import RunRecord, StoreConflict, TrackRequest, init_experiment, track_run
from tau.evidence.records import guess_artifact_type, parse_artifact_spec

from .helpers import mirror_lines, rows


@pytest.fixture
def store(store_root: Path) -> Path:
    init_experiment(store_root, "exp", project="proj")
    return store_root


def test_a_metric_lands_in_one_parquet_file_with_track_tags_and_a_summary(store: Path) -> None:
    result = track_run(
        store, TrackRequest(run=RunRecord(run_id="r1"), metrics={"loss": 0.5}, step=3)
    )

    table = pq.read_table(store / result["metric_file"])
    assert result["metric_rows"] == 1 and table.num_rows == 1
    assert result["metric_file"].startswith("metrics/project=proj/group=default/run=r1/track-")
    tags = json.loads(table["tags"][0].as_py())
    assert tags["tau.metric.source"] == "track"
    assert tags["tau.metric.write_version"] == "tau.exp.track.v0"
    assert rows(store, "SELECT count, latest_value, latest_step FROM metric_summaries") == [
        (1, 0.5, 3)
    ]
    assert rows(store, "SELECT project, state, index_version FROM runs") == [
        ("proj", "succeeded", "expstore.v5")
    ]


def test_repeating_an_identical_track_is_reused_and_writes_nothing(store: Path) -> None:
    request = TrackRequest(
        run=RunRecord(run_id="r1", code_sha="abc"),
        metrics={"loss": 0.5},
        step=3,
        idempotency_key="t1",
    )
    track_run(store, request)
    mirrors = {f: mirror_lines(store, f) for f in ("runs", "metric_files", "idempotency_keys")}

    again = track_run(store, request)
    without_key = track_run(
        store,
        TrackRequest(run=RunRecord(run_id="r1", code_sha="abc"), metrics={"loss": 0.5}, step=3),
    )

    assert again["reused"] is True
    assert without_key["reused"] is True
    assert {f: mirror_lines(store, f) for f in mirrors} == mirrors
    assert len(list((store / "metrics").rglob("*.parquet"))) == 1


def test_changing_a_run_field_under_the_same_key_is_a_conflict(store: Path) -> None:
    track_run(store, TrackRequest(run=RunRecord(run_id="r1", code_sha="abc"), idempotency_key="t1"))
    with pytest.raises(StoreConflict, match="already used"):
        track_run(
            store, TrackRequest(run=RunRecord(run_id="r1", code_sha="def"), idempotency_key="t1")
        )
    with pytest.raises(StoreConflict, match="code_sha"):
        track_run(store, TrackRequest(run=RunRecord(run_id="r1", code_sha="def")))
    assert rows(store, "SELECT code_sha FROM runs") == [("abc",)]


def test_state_moves_forward_but_a_terminal_state_never_changes(store: Path) -> None:
    track_run(store, TrackRequest(run=RunRecord(run_id="r1", state="running")))
    track_run(store, TrackRequest(run=RunRecord(run_id="r1", state="succeeded")))
    assert rows(store, "SELECT state FROM runs") == [("succeeded",)]
    with pytest.raises(StoreConflict, match="already succeeded"):
        track_run(store, TrackRequest(run=RunRecord(run_id="r1", state="failed")))


def test_a_tag_with_a_different_value_is_a_conflict(store: Path) -> None:
    track_run(store, TrackRequest(run=RunRecord(run_id="r1", tags={"team": "a"})))
    with pytest.raises(StoreConflict, match="tags"):
        track_run(store, TrackRequest(run=RunRecord(run_id="r1", tags={"team": "b"})))


def test_configs_are_normalized_and_hashed_into_the_run(store: Path, tmp_path: Path) -> None:
    yaml_cfg = tmp_path / "a.yaml"
    yaml_cfg.write_text("lr: 0.1\nmodel:\n  layers: 4\n")
    json_cfg = tmp_path / "b.json"
    json_cfg.write_text('{"model": {"layers": 4}, "lr": 0.1}')
    track_run(store, TrackRequest(run=RunRecord(run_id="r1"), configs=[(yaml_cfg, "")]))
    track_run(store, TrackRequest(run=RunRecord(run_id="r2"), configs=[(json_cfg, "")]))

    hashes = rows(store, "SELECT run_id, config_hash FROM runs ORDER BY run_id")
    assert hashes[0][1] == hashes[1][1] != ""  # same settings, different file formats
    fields = json.loads(rows(store, "SELECT indexed_fields FROM configs LIMIT 1")[0][0])
    assert fields == {"lr": 0.1, "model.layers": 4}


def test_artifacts_record_digest_size_and_guessed_type(store: Path, tmp_path: Path) -> None:
    ckpt = tmp_path / "last.safetensors"
    ckpt.write_bytes(b"weights")
    track_run(
        store,
        TrackRequest(
            run=RunRecord(run_id="r1"),
            artifacts=[
                parse_artifact_spec(str(ckpt)),
                parse_artifact_spec("plot:curve=s3://bucket/curve.png"),
            ],
        ),
    )
    found = rows(store, "SELECT type, name, size_bytes, digest FROM artifacts ORDER BY name")
    assert found[0][:2] == ("plot", "curve")
    assert found[1][:3] == ("checkpoint", "last.safetensors", 7)
    assert found[1][3].startswith("sha256:")


@pytest.mark.parametrize(
    ("uri", "kind"),
    [
        ("a.PNG", "plot"),
        ("v.mp4", "video"),
        ("m.ckpt", "checkpoint"),
        ("x.log", "log"),
        ("c.yaml", "manifest"),
        ("t.parquet", "table"),
        ("blob", "other"),
    ],
)
def test_artifact_types_are_guessed_from_the_extension(uri: str, kind: str) -> None:
    assert guess_artifact_type(uri) == kind


def test_track_into_a_missing_store_fails_and_names_init(tmp_path: Path) -> None:
    from tau.errors import UsageError

    with pytest.raises(UsageError) as caught:
        track_run(tmp_path / "nowhere", TrackRequest(run=RunRecord(run_id="r1")))
    assert "experiment init" in caught.value.one_line()

"""Staged output publishing, the checkpoint artifact index, and `ingest_run` for engines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.errors import ValidationError
from tau.evidence import RunRecord, ingest_run
from tau.evidence.artifact_index import offload_checkpoint, read_index
from tau.evidence.publish import (
    COMPLETE_MARKER,
    PublishRefused,
    completed_publications,
    publish_staged,
)

from .helpers import rows


@pytest.fixture
def staging(tmp_path: Path) -> Path:
    directory = tmp_path / "staging"
    directory.mkdir()
    (directory / "model.safetensors").write_bytes(b"weights")
    (directory / "eval.json").write_text('{"accuracy": 0.9}')
    return directory


def test_publishing_copies_top_level_files_then_writes_the_marker(
    staging: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    pub = publish_staged(staging, out, "attempt-0")

    assert pub.files == ("eval.json", "model.safetensors")
    assert (pub.path / COMPLETE_MARKER).read_text() == "complete attempt-0\n"
    assert (pub.path / "model.safetensors").read_bytes() == b"weights"
    assert not [p for p in pub.path.iterdir() if p.name.startswith(".tau-publish-")]
    assert [p.publication_id for p in completed_publications(out)] == ["attempt-0"]


def test_readers_ignore_a_publication_without_its_marker(staging: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    pub = publish_staged(staging, out, "attempt-0")
    (pub.path / COMPLETE_MARKER).unlink()
    assert completed_publications(out) == []


def test_republishing_identical_content_is_accepted_but_different_content_is_refused(
    staging: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    publish_staged(staging, out, "p1")
    publish_staged(staging, out, "p1")
    (staging / "eval.json").write_text('{"accuracy": 0.1}')

    with pytest.raises(PublishRefused, match="different content"):
        publish_staged(staging, out, "p1")
    assert json.loads((out / ".tau-artifacts" / "p1" / "eval.json").read_text()) == {
        "accuracy": 0.9
    }


def test_directories_and_reserved_names_are_rejected_and_nothing_is_published(
    staging: Path, tmp_path: Path
) -> None:
    (staging / "nested").mkdir()
    (staging / ".tau-artifacts-complete").write_text("forged")
    with pytest.raises(PublishRefused) as caught:
        publish_staged(staging, tmp_path / "out", "p1")
    assert "nested" in caught.value.message and "reserved" in caught.value.message
    assert completed_publications(tmp_path / "out") == []


@pytest.mark.parametrize("bad", ["a/b", "..", ""])
def test_the_publication_id_is_one_path_segment(staging: Path, tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValidationError, match="single path segment"):
        publish_staged(staging, tmp_path / "out", bad)


def test_checkpoint_offload_copies_to_durable_storage_and_indexes_it(tmp_path: Path) -> None:
    hot, durable = tmp_path / "mnt", tmp_path / "data"
    (hot / "finetunes" / "ft-1").mkdir(parents=True)
    (hot / "finetunes" / "ft-1" / "last.safetensors").write_bytes(b"w" * 10)

    index = offload_checkpoint("ft-1", namespace="team-a", hot_root=hot, durable_root=durable)

    assert index is not None and read_index(durable, "ft-1") == index
    entry = index["artifacts"][0]
    assert entry["status"] == "ready" and entry["kind"] == "file" and entry["size_bytes"] == 10
    assert (
        Path(entry["durable_path"])
        == durable / "finetunes" / "ft-1" / "artifacts" / "last.safetensors"
    )
    assert offload_checkpoint("ft-2", namespace="n", hot_root=hot, durable_root=durable) is None
    with pytest.raises(ValidationError, match="relative"):
        offload_checkpoint("ft-1", namespace="n", hot_root=hot, durable_root=durable, rel="../x")


def test_ingest_run_records_the_run_its_metrics_and_its_completed_outputs(
    staging: Path, tmp_path: Path, write_history
) -> None:
    out = tmp_path / "out"
    publish_staged(staging, out, "attempt-0")
    history = write_history([{"_step": s, "loss": 1 / (s + 1)} for s in range(5)])
    record = RunRecord(
        run_id="local-1", project="demo", run_group_id="local", state="succeeded", code_sha="abc123"
    )
    store = tmp_path / "store"

    first = ingest_run(store, record, [history], out, experiment="demo-exp")
    again = ingest_run(store, record, [history], out, experiment="demo-exp")

    assert first["run_created"] and first["artifacts_added"] == 2 and first["metric_rows"] == 5
    assert not again["run_created"] and again["artifacts_added"] == 0 and again["metrics_reused"]
    assert rows(store, "SELECT run_id, experiment_id, code_sha FROM runs") == [
        ("local-1", "demo-exp", "abc123")
    ]
    assert rows(
        store,
        "SELECT name FROM artifacts WHERE direction='output' AND type != 'metrics-jsonl' "
        "ORDER BY name",
    ) == [("eval.json",), ("model.safetensors",)]
    assert rows(store, "SELECT count FROM metric_summaries") == [(5,)]

"""The dataset registry on a temporary data root: every verb, its refusals and its records."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tau.data import datasets, layout
from tau.data.records import DatasetFile, content_digest
from tau.data.refs import DatasetRef, exact_version, parse_dataset
from tau.data.root import DirectoryRoot
from tau.errors import RuntimeFailure, UsageError, ValidationError

CLOCK = "2026-07-16T10:00:00Z"


def clock() -> str:
    return CLOCK


@pytest.fixture
def root(tmp_path: Path) -> DirectoryRoot:
    return DirectoryRoot(tmp_path)


def put_bytes(root: DirectoryRoot, directory: str, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root.directory / directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def file_entry(rel: str, data: bytes) -> DatasetFile:
    return DatasetFile(path=rel, bytes=len(data), sha256=hashlib.sha256(data).hexdigest())


SHARDS = {"train/part-0.bin": b"\x01\x00\x02\x00", "val/part-0.bin": b"\x03\x00"}


def register_scanned(
    root: DirectoryRoot, version: str = "1", purpose: str = "eval", where: str = "uploads/mnist"
) -> None:
    put_bytes(root, where, SHARDS)
    files = datasets.scan(root, where)
    reg = datasets.Registration("mnist", version, purpose, files, "verified", where)
    datasets.register(root, datasets.build(reg, clock))


def test_register_from_a_directory_hashes_every_file_and_writes_the_record_once(root) -> None:
    register_scanned(root)
    path = root.directory / layout.dataset_record("mnist", "1")
    record = json.loads(path.read_text())
    assert path.as_posix().endswith("dataset-registry/datasets/mnist/1/dataset.json")
    assert record["schema_version"] == 1
    assert record["assurance"] == "verified"
    assert record["prefix"] == "uploads/mnist"
    assert [f["path"] for f in record["files"]] == ["train/part-0.bin", "val/part-0.bin"]
    assert record["total_bytes"] == 6
    assert record["created_at"] == CLOCK
    assert record["eval"] == {}
    lines = sorted(f"{hashlib.sha256(d).hexdigest()}  {p}\n" for p, d in SHARDS.items())
    assert record["digest"] == "sha256:" + hashlib.sha256("".join(lines).encode()).hexdigest()


def test_a_registered_version_is_immutable(root) -> None:
    register_scanned(root)
    before = (root.directory / layout.dataset_record("mnist", "1")).read_bytes()
    with pytest.raises(UsageError, match=r"mnist@1 already exists; datasets are immutable"):
        register_scanned(root)
    assert (root.directory / layout.dataset_record("mnist", "1")).read_bytes() == before


def test_a_bad_record_reports_every_problem_and_writes_nothing(root) -> None:
    files = [
        DatasetFile(path="../escape", bytes=0, sha256="ABC"),
        DatasetFile(path="a.bin", bytes=2, sha256="0" * 64, split="holdout"),
        DatasetFile(path="a.bin", bytes=2, sha256="0" * 64),
    ]
    reg = datasets.Registration("mnist", "1", "eval", files, "manifest-supplied", "x")
    with pytest.raises(ValidationError) as caught:
        datasets.register(root, datasets.build(reg, clock))
    problems = "\n".join(caught.value.problems)
    assert "files[0] ('../escape'): path must be a clean relative path" in problems
    assert "files[0] ('../escape'): bytes must be > 0" in problems
    assert "files[0] ('../escape'): sha256 must be 64 lowercase hex" in problems
    assert "files[1] ('a.bin'): split must be one of: train, validation, test" in problems
    assert "files[2] ('a.bin'): duplicate path" in problems
    assert not (root.directory / "dataset-registry").exists()


def test_verified_uint16_pretrain_shards_carry_their_token_counts(root) -> None:
    register_scanned(root, purpose="pretrain")
    record = datasets.get(root, "mnist", "1")
    assert [f.token_count for f in record.files] == [2, 1]
    assert record.pretrain is not None and record.pretrain.total_tokens == 3
    put_bytes(root, "odd", {"x.bin": b"abc"})
    reg = datasets.Registration(
        "odd", "1", "pretrain", datasets.scan(root, "odd"), "verified", "odd"
    )
    with pytest.raises(ValidationError, match="odd byte count 3"):
        datasets.build(reg, clock)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("MNIST", "dataset name 'MNIST' is invalid"),
        ("-mnist", "is invalid"),
        ("mnist@", "version is required"),
        ("mnist@1..2", "version '1..2' is invalid"),
        ("", "dataset name is required"),
    ],
)
def test_registry_segments_are_lowercase_alphanumerics_with_internal_hyphens(text, message):
    with pytest.raises(UsageError, match=message):
        parse_dataset(text)


def test_exact_version_refuses_a_bare_name() -> None:
    assert exact_version("mnist@2025.01", "verify") == ("mnist", "2025.01")
    with pytest.raises(UsageError, match="verify requires NAME@VERSION"):
        exact_version("mnist", "verify")


def test_references_resolve_a_version_first_then_an_alias_and_a_bare_name_via_latest(root):
    register_scanned(root, "1")
    register_scanned(root, "2", where="uploads/mnist-2")
    datasets.set_alias(root, "mnist", "latest", "2", clock=clock)
    datasets.set_alias(root, "mnist", "stable", "1", clock=clock)
    assert datasets.resolve(root, DatasetRef("mnist")).version == "2"
    assert datasets.resolve(root, DatasetRef("mnist", "stable")).version == "1"
    assert datasets.resolve(root, DatasetRef("mnist", "1")).version == "1"
    with pytest.raises(RuntimeFailure) as caught:
        datasets.resolve(root, DatasetRef("mnist", "nightly"))
    assert "has no version or alias 'nightly'" in caught.value.one_line()
    assert "known versions: 1, 2" in caught.value.one_line()


def test_a_bare_name_without_latest_says_how_to_set_it(root) -> None:
    register_scanned(root)
    with pytest.raises(RuntimeFailure) as caught:
        datasets.resolve(root, DatasetRef("mnist"))
    line = caught.value.one_line()
    assert "alias mnist:latest is not registered" in line
    assert "tau data dataset alias set mnist latest VERSION" in line


def test_an_alias_record_pins_the_version_and_its_digest(root) -> None:
    register_scanned(root)
    moved = datasets.set_alias(root, "mnist", "latest", "1", clock=clock)
    on_disk = json.loads((root.directory / layout.dataset_alias("mnist", "latest")).read_text())
    assert on_disk == {
        "schema_version": 1,
        "name": "mnist",
        "alias": "latest",
        "version": "1",
        "digest": datasets.get(root, "mnist", "1").digest,
        "record_path": "/data/dataset-registry/datasets/mnist/1/dataset.json",
        "updated_at": CLOCK,
    }
    assert moved.version == "1"


def test_alias_compare_and_swap(root) -> None:
    register_scanned(root, "1")
    register_scanned(root, "2", where="v2")
    datasets.set_alias(root, "mnist", "latest", "1", expect_absent=True, clock=clock)
    with pytest.raises(RuntimeFailure, match=r"already points at 1 \(--expect-absent\)"):
        datasets.set_alias(root, "mnist", "latest", "2", expect_absent=True, clock=clock)
    with pytest.raises(RuntimeFailure, match=r"points at 1, not 2 \(--expect\)"):
        datasets.set_alias(root, "mnist", "latest", "2", expect="2", clock=clock)
    datasets.set_alias(root, "mnist", "latest", "2", expect="1", clock=clock)
    assert datasets.get_alias(root, "mnist", "latest").version == "2"


def test_an_alias_cannot_point_at_an_unregistered_version(root) -> None:
    register_scanned(root)
    with pytest.raises(RuntimeFailure, match="dataset mnist@9 is not registered"):
        datasets.set_alias(root, "mnist", "latest", "9")


def test_rm_is_refused_while_an_alias_points_at_the_version(root) -> None:
    register_scanned(root, "1")
    register_scanned(root, "2", where="v2")
    datasets.set_alias(root, "mnist", "latest", "1", clock=clock)
    with pytest.raises(UsageError, match="mnist@1 is still the target of alias latest"):
        datasets.remove(root, "mnist", "1")
    datasets.set_alias(root, "mnist", "latest", "2", clock=clock)
    datasets.remove(root, "mnist", "1")
    assert datasets.versions(root, "mnist") == ["2"]
    assert (root.directory / "uploads/mnist/train/part-0.bin").exists()  # bytes stay


def test_verify_reports_each_missing_changed_and_unexpected_file(root) -> None:
    register_scanned(root)
    assert datasets.verify(root, "mnist", "1")["ok"] is True
    (root.directory / "uploads/mnist/val/part-0.bin").unlink()
    (root.directory / "uploads/mnist/train/part-0.bin").write_bytes(b"\x09\x00\x09\x00")
    (root.directory / "uploads/mnist/stray.txt").write_text("hi")
    result = datasets.verify(root, "mnist", "1")
    assert result["ok"] is False
    assert {f["path"]: f["status"] for f in result["files"]} == {
        "train/part-0.bin": "mismatch",
        "val/part-0.bin": "missing",
    }
    assert [u["path"] for u in result["unexpected"]] == ["stray.txt"]


def test_verify_can_check_a_copy_elsewhere(root) -> None:
    register_scanned(root)
    put_bytes(root, "copy", SHARDS)
    assert datasets.verify(root, "mnist", "1", source="copy")["location"] == "/data/copy"
    assert datasets.verify(root, "mnist", "1", source="copy")["ok"]


def manifest_registered(root: DirectoryRoot) -> None:
    files = [file_entry(p, d) for p, d in SHARDS.items()]
    prefix = layout.dataset_bytes("mnist", "1")
    reg = datasets.Registration("mnist", "1", "eval", files, "manifest-supplied", prefix)
    datasets.register(root, datasets.build(reg, clock))


def test_ingest_copies_the_bytes_into_the_recorded_prefix_and_records_proofs(root) -> None:
    manifest_registered(root)
    assert datasets.status(root, "mnist", "1").state == "registered"
    put_bytes(root, "staging", SHARDS)
    state = datasets.ingest(root, "mnist", "1", "staging", clock=clock)
    assert state.state == "ready"
    assert (root.directory / "datasets/mnist/1/train/part-0.bin").read_bytes() == SHARDS[
        "train/part-0.bin"
    ]
    on_disk = json.loads((root.directory / layout.ingest_status("mnist", "1")).read_text())
    assert on_disk["state"] == "ready"
    assert sorted(f["path"] for f in on_disk["completed_files"]) == sorted(SHARDS)
    assert datasets.verify(root, "mnist", "1")["ok"]


def test_an_interrupted_ingest_resumes_with_only_the_unproven_files(root, monkeypatch) -> None:
    manifest_registered(root)
    put_bytes(root, "staging", SHARDS)
    copied: list[list[str]] = []
    real = DirectoryRoot.copy

    def crash_after_first(self, source, destination, files, on_file):
        copied.append(list(files))
        real(self, source, destination, files[:1], on_file)
        raise KeyboardInterrupt

    monkeypatch.setattr(DirectoryRoot, "copy", crash_after_first)
    with pytest.raises(KeyboardInterrupt):
        datasets.ingest(root, "mnist", "1", "staging", clock=clock)
    assert datasets.status(root, "mnist", "1").state == "ingesting"
    monkeypatch.setattr(
        DirectoryRoot, "copy", lambda self, *a: (copied.append(list(a[2])), real(self, *a))[1]
    )
    assert datasets.ingest(root, "mnist", "1", "staging", clock=clock).state == "ready"
    assert copied == [sorted(SHARDS), ["val/part-0.bin"]]


def test_ingest_of_different_bytes_fails_and_says_so_in_the_status(root) -> None:
    manifest_registered(root)
    put_bytes(root, "staging", {**SHARDS, "val/part-0.bin": b"\x07\x07"})
    with pytest.raises(RuntimeFailure, match=r"ingest of mnist@1 failed: val/part-0\.bin"):
        datasets.ingest(root, "mnist", "1", "staging", clock=clock)
    state = datasets.status(root, "mnist", "1")
    assert state.state == "failed" and "val/part-0.bin" in (state.error or "")


def test_ingest_from_a_missing_source_fails_cleanly(root) -> None:
    manifest_registered(root)
    with pytest.raises(RuntimeFailure, match="/data/nowhere does not exist"):
        datasets.ingest(root, "mnist", "1", "nowhere", clock=clock)


def test_list_filters_by_purpose_and_tag_and_warns_about_damaged_records(root) -> None:
    register_scanned(root, "1")
    put_bytes(root, "p", {"a.bin": b"\x00\x01"})
    reg = datasets.Registration(
        "tokens", "1", "pretrain", datasets.scan(root, "p"), "verified", "p", tags={"team": "nlp"}
    )
    datasets.register(root, datasets.build(reg, clock))
    bad = root.directory / layout.dataset_record("broken", "1")
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json")
    records, warnings = datasets.list_records(root)
    assert [(r.name, r.version) for r in records] == [("mnist", "1"), ("tokens", "1")]
    assert len(warnings) == 1 and "broken/1/dataset.json" in warnings[0]
    assert [r.name for r in datasets.list_records(root, purpose="pretrain")[0]] == ["tokens"]
    assert [r.name for r in datasets.list_records(root, tags={"team": "nlp"})[0]] == ["tokens"]


def test_ref_names_the_pinned_version_and_the_mount_path(root) -> None:
    register_scanned(root)
    ref = datasets.reference(datasets.get(root, "mnist", "1"))
    assert ref["manifest"] == "/data/dataset-registry/datasets/mnist/1/dataset.json"
    assert ref["modes"]["durable_mount"] == {"path": "/data/uploads/mnist"}
    assert ref["recommended"] == "durable_mount"
    assert ref["digest"].startswith("sha256:")
    lines = datasets.env_lines(datasets.get(root, "mnist", "1"), "MNIST_DATASET")
    assert "MNIST_DATASET_PATH=/data/uploads/mnist" in lines
    assert datasets.env_prefix("fine-web") == "FINE_WEB_DATASET"


def test_digest_is_order_independent() -> None:
    a, b = file_entry("a", b"1"), file_entry("b", b"2")
    assert content_digest([a, b]) == content_digest([b, a])


def test_data_paths_stay_on_the_data_root() -> None:
    assert layout.on_root("/data/uploads/x") == "uploads/x"
    assert layout.on_root("uploads/x/") == "uploads/x"
    for bad in ("/etc", "../x", "/data", "/data/../etc", "."):
        with pytest.raises(UsageError):
            layout.on_root(bad)

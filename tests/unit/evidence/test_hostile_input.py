"""Hostile or broken JSONL, identifiers and stores: one line naming the line or file, never a
crash, a write outside the store, or a read that changes the store."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tau.errors import ValidationError
from tau.evidence import ImportRequest, Store, import_jsonl, init_experiment
from tau.evidence.errors import StoreCorrupt
from tau.evidence.jsonl import MAX_DEPTH, MAX_LINE_BYTES

PORTAL = [sys.executable, "-m", "tau.portal"]


@pytest.fixture
def store(store_root: Path) -> Path:
    init_experiment(store_root, "exp", project="proj")
    return store_root


def refused(store: Path, path: Path, **fields: str) -> str:
    with pytest.raises(ValidationError) as caught:
        import_jsonl(store, ImportRequest(run_id="r1", history=[str(path)], **fields))
    return caught.value.one_line()


def write(tmp_path: Path, data: bytes, name: str = "h.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_a_40kb_line_of_brackets_is_one_line_error_not_a_segfault(
    tmp_path: Path, store: Path
) -> None:
    history = write(tmp_path, b'{"loss": 1}\n' + b"[" * 40_000 + b"\n")
    result = subprocess.run(
        [
            *PORTAL,
            "experiment",
            "--store",
            str(store),
            "import",
            "jsonl",
            "--run",
            "r1",
            "--history",
            str(history),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result
    assert result.stderr == (
        f"error: {history}:2: JSON nested deeper than {MAX_DEPTH} levels "
        "(owner: the history's writer)\n"
    )


@pytest.mark.parametrize(
    "line",
    [
        b'{"a": {"b": ' * 70 + b"1" + b"}" * 70 + b', "loss": 1}',
        b'{"loss": 1, "deep": ' + b"[" * 65 + b"]" * 65 + b"}",
    ],
)
def test_deep_nesting_is_refused_with_its_line(tmp_path: Path, store: Path, line: bytes) -> None:
    message = refused(store, write(tmp_path, b'{"loss": 2}\n' + line + b"\n"))
    assert ":2: JSON nested deeper than 64 levels" in message


def test_brackets_inside_strings_are_not_nesting(tmp_path: Path, store: Path) -> None:
    history = write(tmp_path, json.dumps({"note": "[" * 500, "loss": 1}).encode() + b"\n")
    assert import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))["rows"] == 1


def test_an_over_long_line_is_refused(tmp_path: Path, store: Path) -> None:
    line = json.dumps({"loss": 1, "pad": "x" * (MAX_LINE_BYTES + 1)}).encode()
    assert f":1: line is longer than {MAX_LINE_BYTES} bytes" in refused(
        store, write(tmp_path, line + b"\n")
    )


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        ([b'{"_step": 1e30, "loss": 1}'], ":1: _step must be a finite integer within 64 bits"),
        ([b'{"_step": 9223372036854775808, "loss": 1}'], ":1: _step must be a finite integer"),
        ([b'{"loss": 1}', b'{"_step": Infinity, "loss": 2}'], ":2: _step must be a finite"),
        ([b'{"_step": -Infinity, "loss": 2}'], ":1: _step must be a finite integer"),
        ([b'{"_step": 1, "lo\xffss": 1}'], ":1: line is not valid UTF-8"),
        ([b'{"_step": 1, "lo\\ud800ss": 1}'], ":1: a key is not valid UTF-8"),
        ([b'{"_timestamp": 1e300, "loss": 1}'], ":1: _timestamp must be epoch seconds or milli"),
        ([b'{"_timestamp": -1e12, "loss": 1}'], ":1: _timestamp must be epoch seconds or milli"),
        ([b'{"_step": ' + b"9" * 400 + b', "loss": 1}'], ":1: _step must be a finite integer"),
    ],
)
def test_ordinary_but_out_of_range_values_name_their_line(
    tmp_path: Path, store: Path, lines: list[bytes], problem: str
) -> None:
    message = refused(store, write(tmp_path, b"\n".join(lines) + b"\n"))
    assert problem in message and "internal error" not in message


def test_an_integer_metric_beyond_double_precision_imports_as_the_nearest_double(
    tmp_path: Path, store: Path
) -> None:
    values = [-121_645_100_408_832_001, 2**53 + 1, 7]
    lines = [
        json.dumps({"_step": i, "_timestamp": 1760000000 + i, "count": v})
        for i, v in enumerate(values)
    ]
    history = write(tmp_path, "\n".join(lines).encode() + b"\n")
    result = import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))
    table = pq.read_table(store / result["metric_file"])
    assert table["value"].to_pylist() == [float(v) for v in values]


@pytest.mark.parametrize("stamp", [1_700_000_000_123, 1_700_000_000.123])
def test_millisecond_timestamps_are_detected_and_stored_as_the_same_instant(
    tmp_path: Path, store: Path, stamp: float
) -> None:
    history = write(tmp_path, json.dumps({"_step": 1, "_timestamp": stamp, "loss": 1}).encode())
    result = import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))
    table = pq.read_table(store / result["metric_file"])
    wall = table["wall_time"][0].as_py()
    assert wall == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)


@pytest.mark.parametrize("flag", ["project", "group", "experiment"])
def test_an_identifier_that_would_leave_the_store_is_refused(
    tmp_path: Path, store: Path, flag: str
) -> None:
    history = write(tmp_path, b'{"loss": 1}\n')
    message = refused(store, history, **{flag: "x/../../../outside"})
    assert f"id 'x/../../../outside' (--{flag}) is invalid" in message and "'x-outside'" in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.jsonl", "store"]


@pytest.mark.parametrize("project", ["x/../../../outside", "../../../outside"])
def test_init_refuses_a_traversing_project_and_writes_nothing(tmp_path: Path, project: str) -> None:
    root = tmp_path / "store"
    result = subprocess.run(
        [
            *PORTAL,
            "experiment",
            "--store",
            str(root),
            "init",
            "e2",
            "--project",
            project,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "(--project) is invalid" in result.stderr
    assert not root.exists() and list(tmp_path.iterdir()) == []


def listing(store: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PORTAL, "experiment", "--store", str(store), "list", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def imported(tmp_path: Path, store: Path) -> Path:
    history = write(tmp_path, b'{"_step": 1, "loss": 1}\n')
    import_jsonl(store, ImportRequest(run_id="r1", history=[str(history)]))
    for side in ("index.sqlite-wal", "index.sqlite-shm"):
        (store / side).unlink(missing_ok=True)
    return store


def test_a_zero_byte_index_is_store_corrupt_and_is_not_rebuilt(imported: Path) -> None:
    (imported / "index.sqlite").write_bytes(b"")
    before = snapshot(imported)
    result = listing(imported)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith(
        f"error: {imported}/index.sqlite is empty (0 bytes) but manifest.json says"
    )
    assert "restore the store directory" in result.stderr and result.stderr.count("\n") == 1
    assert snapshot(imported) == before
    with pytest.raises(StoreCorrupt):
        Store.create(imported)  # init does not paper over it either
    assert snapshot(imported) == before


def test_a_manifest_from_a_newer_taugrid_is_refused_before_anything_is_read(
    imported: Path,
) -> None:
    manifest = json.loads((imported / "manifest.json").read_text())
    manifest["schema_version"] = "expstore.v9"
    (imported / "manifest.json").write_text(json.dumps(manifest))
    before = snapshot(imported)
    result = listing(imported)
    assert result.returncode == 1
    assert "schema_version expstore.v9 is newer than this TauGrid (expstore.v5)" in result.stderr
    assert snapshot(imported) == before


@pytest.mark.parametrize("manifest", [b"[1, 2]", b"{", b"[" * 100_000, b'{"kind": 7}'])
def test_a_damaged_manifest_is_one_store_corrupt_line(imported: Path, manifest: bytes) -> None:
    (imported / "manifest.json").write_bytes(manifest)
    result = listing(imported)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "manifest.json" in result.stderr and "internal error" not in result.stderr


def test_a_truncated_index_is_store_corrupt(imported: Path) -> None:
    data = (imported / "index.sqlite").read_bytes()
    (imported / "index.sqlite").write_bytes(data[: len(data) // 3])
    result = listing(imported)
    assert result.returncode == 1 and "index.sqlite" in result.stderr
    assert "internal error" not in result.stderr and result.stderr.count("\n") == 1


def test_a_catalogue_row_pointing_outside_the_store_is_never_followed(
    imported: Path, tmp_path: Path
) -> None:
    import contextlib
    import sqlite3

    from tau.evidence.series import read_series

    (tmp_path / "secret.parquet").write_bytes(b"not yours")
    with contextlib.closing(sqlite3.connect(imported / "index.sqlite")) as db:
        db.execute("UPDATE metric_files SET path='../secret.parquet'")
        db.commit()
    with pytest.raises(StoreCorrupt, match="points outside the store"):
        read_series(Store.open(imported), ["r1"])


def test_a_history_of_null_lines_is_one_line_error_not_a_segfault(
    tmp_path: Path, store: Path
) -> None:
    history = write(tmp_path, b"null\nnull\nnull\n")  # Arrow's JSON reader crashes on it
    result = subprocess.run(
        [
            *PORTAL,
            "experiment",
            "--store",
            str(store),
            "import",
            "jsonl",
            "--run",
            "r1",
            "--history",
            str(history),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result
    assert result.stderr == (
        f"error: {history}:1: each line must be a JSON object (owner: the history's writer)\n"
    )


def test_a_garbled_text_page_in_the_index_is_store_corrupt(imported: Path) -> None:
    index = imported / "index.sqlite"
    # Every stored copy of the project text gets an invalid UTF-8 byte (a flipped bit).
    index.write_bytes(index.read_bytes().replace(b"proj", b"\x80roj"))
    result = listing(imported)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "index.sqlite" in result.stderr and "internal error" not in result.stderr

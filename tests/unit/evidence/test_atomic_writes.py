"""Whole-file writes are atomic: readers see the old or the new file, never a partial one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tau.evidence import atomic

WRITER = """
import sys
from pathlib import Path
from tau.evidence import atomic
target = Path(sys.argv[1])
blobs = [b"a" * (1 << 20), b"b" * (2 << 20)]
for i in range(150):
    atomic.write_bytes(target, blobs[i % 2])
"""


def test_a_concurrent_reader_never_sees_a_partial_file(tmp_path: Path) -> None:
    target = tmp_path / "metrics.parquet"
    atomic.write_bytes(target, b"a" * (1 << 20))
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(target)])
    seen = set()
    reads = 0
    while writer.poll() is None or reads < 10:
        data = target.read_bytes()
        reads += 1
        assert data in (b"a" * (1 << 20), b"b" * (2 << 20)), f"partial read of {len(data)} bytes"
        seen.add(data[:1])
    assert writer.wait() == 0
    assert reads > 10
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    atomic.write_text(target, "old")

    with pytest.raises(RuntimeError), atomic.atomic_open(target) as handle:
        handle.write(b"half of the new")
        raise RuntimeError("crash while writing")

    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]


def test_temp_files_are_dotfiles_beside_the_target(tmp_path: Path) -> None:
    with atomic.atomic_open(tmp_path / "part" / "x.parquet") as handle:
        handle.write(b"data")
        during = [p.name for p in (tmp_path / "part").iterdir()]
    assert len(during) == 1 and during[0].startswith(".x.parquet.")
    assert [p.name for p in (tmp_path / "part").iterdir()] == ["x.parquet"]

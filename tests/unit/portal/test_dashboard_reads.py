"""A dashboard read never writes the store: no summary backfill, no migration, no WAL write.

The Portal and `taugrid-portal experiment` read verbs share stores with running writers (the
offloader, `tau.stellar`); a read that wrote would race them and need the write lock.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tau.cli.main import run as run_cli
from tau.evidence import Store
from tau.portal.cli.main import cli
from tau.portal.server import ServerConfig, create_app
from tests.unit.portal.conftest import build_demo_store


def _fingerprint(root: Path) -> dict[str, str]:
    """Every store file's digest. SQLite's -shm is the readers' lock table and an empty -wal
    is what opening a WAL database creates; neither holds data."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and not path.name.endswith("-shm")
        and not (path.name.endswith("-wal") and path.stat().st_size == 0)
    }


@pytest.fixture
def unsummarized_store(tmp_path: Path) -> Path:
    """The demo store as an old writer left it: metric files indexed, never summarized."""
    root = build_demo_store(tmp_path / "store", tmp_path / "histories")
    with Store.open(root).mutate() as txn:
        txn.db.execute("DELETE FROM metric_summaries")
        txn.db.execute("DELETE FROM metric_summary_files")
    return root


def _portal(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str]:
    code = run_cli(cli, "taugrid-portal", ["experiment", "--store", str(root), *args])
    return code, capsys.readouterr().out


READS = [
    ("stellar", "demo", "-o", "json"),
    ("status", "demo", "-o", "json"),
    ("list", "--kind", "runs", "-o", "json"),
    ("compare", "demo", "--format", "json"),
    ("search", "-o", "json"),
]


@pytest.mark.parametrize("argv", READS, ids=[a[0] for a in READS])
def test_a_cli_read_leaves_every_store_file_byte_identical(
    capsys: pytest.CaptureFixture[str], unsummarized_store: Path, argv: tuple[str, ...]
) -> None:
    before = _fingerprint(unsummarized_store)

    code, out = _portal(capsys, unsummarized_store, *argv)

    assert code == 0 and json.loads(out) is not None
    assert _fingerprint(unsummarized_store) == before


def test_a_served_dashboard_snapshot_leaves_the_store_byte_identical(
    unsummarized_store: Path,
) -> None:
    client = TestClient(
        create_app(ServerConfig(store=Store.open(unsummarized_store, migrate=False))),
        base_url="http://127.0.0.1",
    )
    before = _fingerprint(unsummarized_store)

    response = client.get("/api/v2/stellar/snapshot", params={"target": "demo"})

    assert response.status_code == 200 and response.json()["target"] == "demo"
    assert _fingerprint(unsummarized_store) == before


def test_experiment_init_is_the_writer_that_backfills_missing_summaries(
    capsys: pytest.CaptureFixture[str], unsummarized_store: Path
) -> None:
    _, out = _portal(capsys, unsummarized_store, "stellar", "demo", "-o", "json")
    assert json.loads(out)["metrics"] == []

    code, _ = _portal(capsys, unsummarized_store, "init", "demo", "--project", "demo")

    _, out = _portal(capsys, unsummarized_store, "stellar", "demo", "-o", "json")
    assert code == 0 and sorted(json.loads(out)["metrics"]) == [
        "accuracy",
        "nan_metric",
        "train/loss",
    ]

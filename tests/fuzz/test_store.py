"""Fuzz: read commands and the Stellar server on a damaged experiment store.

A copy of a small real store gets truncated, zeroed, garbled, deleted, replaced or
symlinked files and edited manifests; every read answers exit 0, 1 (StoreCorrupt and other
runtime failures) or 2 with one error line, the server answers JSON on every route, and no
read changes a byte of the store or anything beside it.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st

from tau.errors import TauError
from tau.evidence import Store
from tests.fuzz.contract import TIMEOUT, bounded, budget, check, portal, snapshot, tally
from tests.unit.portal.conftest import build_demo_store

COMMANDS = [
    ["list"],
    ["list", "-o", "json"],
    ["search", "-q", "loss", "-o", "json"],
    ["status", "demo"],
    ["status", "run-a", "-o", "json"],
    ["stellar", "demo", "-o", "json"],
    ["compare", "demo", "--metric", "train/loss"],
    ["sql", "SELECT count(*) FROM runs"],
    ["experiments", "list"],
]
ROUTES = [
    "/healthz",
    "/api/v2/stellar/runs?target=demo",
    "/api/v2/stellar/runs/run-a",
    "/api/v2/stellar/series?target=demo",
    "/api/v2/stellar/snapshot?target=demo",
    "/api/v2/stellar/status?target=demo",
    "/api/v2/stellar/experiments",
    "/api/v2/stellar/artifacts?target=demo",
]
MANIFEST_EDITS = st.sampled_from(
    [
        {"schema_version": "expstore.v9"},
        {"schema_version": "expstore.v-1"},
        {"schema_version": "garbage"},
        {"schema_version": 5},
        {"kind": "tau.other"},
        {"kind": None},
        {"project": "../../outside"},
        {"index": "../outside.sqlite"},
    ]
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-store-base")
    store = build_demo_store(root / "store", root / "histories")
    with closing(sqlite3.connect(store / "index.sqlite")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for side in ("index.sqlite-wal", "index.sqlite-shm"):
        (store / side).unlink(missing_ok=True)
    return store


def _files(store: Path) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in store.rglob("*") if p.is_file())


@st.composite
def damage(draw: st.DrawFn, files: list[str]) -> list[tuple]:
    ops = []
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(["index.sqlite", "manifest.json", *files]))
        op = draw(
            st.sampled_from(
                ["truncate", "zero", "garble", "header", "delete", "dir", "link", "manifest"]
            )
        )
        ops.append(
            (
                op,
                target,
                draw(st.floats(0, 1)),
                draw(st.binary(min_size=1, max_size=64)),
                draw(MANIFEST_EDITS),
            )
        )
    return ops


def apply(store: Path, outside: Path, ops: list[tuple]) -> None:
    for op, target, where, noise, edit in ops:
        path = store / target
        if op == "manifest":
            path = store / "manifest.json"
            try:
                manifest = json.loads(path.read_text())
                manifest.update(edit)
                path.write_text(json.dumps(manifest))
            except (OSError, ValueError, AttributeError, TypeError):
                pass
            continue
        if not path.is_file():
            continue
        size = path.stat().st_size
        if op == "truncate":
            with path.open("r+b") as handle:
                handle.truncate(int(size * where))
        elif op == "zero":
            path.write_bytes(b"")
        elif op == "garble":
            with path.open("r+b") as handle:
                handle.seek(int(size * where))
                handle.write(noise)
        elif op == "header":
            with path.open("r+b") as handle:
                handle.seek(int(min(size, 100) * where))
                handle.write(noise[:4])
        elif op == "delete":
            path.unlink()
        elif op == "dir":
            path.unlink()
            path.mkdir()
        elif op == "link":
            path.unlink()
            path.symlink_to(outside)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-store")
    (root / "outside.bin").write_bytes(b"PAR1 not the store's file PAR1")
    return root


@pytest.mark.timeout(TIMEOUT)
@budget(40)
@given(data=st.data(), command=st.sampled_from(COMMANDS), serve=st.booleans())
def test_reads_of_a_damaged_store_keep_the_contract(
    base: Path, work: Path, data: st.DataObject, command: list[str], serve: bool
) -> None:
    store = work / "store"
    shutil.rmtree(store, ignore_errors=True)
    shutil.copytree(base, store, symlinks=True)
    apply(store, work / "outside.bin", data.draw(damage(_files(base))))
    before = snapshot(work)
    outcome = portal(["experiment", "--store", str(store), *command], work)
    check("store reads", outcome, codes=(0, 1, 2), outside=work, outside_before=before)
    if serve:
        _serve(store, work, before)


def _serve(store: Path, work: Path, before: dict[str, bytes]) -> None:
    from tau.portal.server import ServerConfig, create_app

    counts = tally("store server")
    try:
        opened = Store.open(store, migrate=False)
    except TauError:
        return  # refused before serving: the CLI path above already checked the line
    client = TestClient(create_app(ServerConfig(store=opened)), base_url="http://127.0.0.1")
    for route in ROUTES:
        counts["inputs"] += 1
        with bounded():
            response = client.get(route)
        assert response.headers["content-type"].startswith("application/json"), route
        assert response.status_code in (200, 400, 404, 500), (route, response.status_code)
        if response.status_code >= 400:
            reason = response.json()["reason"]
            assert "Traceback" not in reason and "\n" not in reason, reason
    if snapshot(work) != before:
        counts["writes outside"] += 1
        raise AssertionError("the server changed the store")

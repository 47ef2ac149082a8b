"""`experiment export`: a self-contained copy of the store packet."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.errors import UsageError
from tau.evidence import atomic
from tau.evidence.store import APPEND_LOG_DIR, ARTIFACTS_DIR, INDEX, MANIFEST, METRICS_DIR, Store

EXPORT_KIND = "tau.exp.export"


def export_packet(store: Store, out: Path, *, force: bool = False) -> dict[str, Any]:
    root = store.root.resolve()
    target = out.resolve()
    if target == root or root in target.parents:
        raise UsageError(
            f"--out {out} is inside the store {store.root}",
            hint="export elsewhere",
            owner="the user",
        )
    if target.exists() and any(target.iterdir()) and not force:
        raise UsageError(
            f"--out {out} is not empty", hint="pass --force to write into it", owner="the user"
        )
    target.mkdir(parents=True, exist_ok=True)
    import sqlite3

    # A consistent snapshot of the catalogue even while a writer is active (WAL).
    with store.connect(readonly=True) as source:
        snapshot = sqlite3.connect(target / f".{INDEX}.tmp")
        source.backup(snapshot)
        snapshot.close()
    (target / f".{INDEX}.tmp").replace(target / INDEX)
    atomic.copy_file(store.root / MANIFEST, target / MANIFEST)
    for sub in (APPEND_LOG_DIR, METRICS_DIR, ARTIFACTS_DIR):
        if (store.root / sub).is_dir():
            shutil.copytree(store.root / sub, target / sub, dirs_exist_ok=True)
    files = [p for p in target.rglob("*") if p.is_file()]
    readme = {
        "kind": EXPORT_KIND,
        "source_store_path": str(store.root),
        "schema_version": store.manifest.get("schema_version"),
        "exported_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "files": len(files),
    }
    atomic.write_text(target / "README.json", json.dumps(readme, indent=2) + "\n")
    return {
        "out": str(target),
        "files": len(files) + 1,
        "bytes": sum(p.stat().st_size for p in files),
    }

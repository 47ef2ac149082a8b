"""Plain helpers for the store suites (imported relatively by the test modules)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any


def rows(store: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(store / "index.sqlite")) as db:
        return db.execute(sql, args).fetchall()


def mirror_lines(store: Path, family: str) -> list[dict[str, Any]]:
    path = store / "append-log" / f"{family}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

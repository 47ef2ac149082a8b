"""Plain helpers for the store suites (imported relatively by the test modules)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tau.cli.main import run as run_cli


def rows(store: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store / "index.sqlite") as db:
        return db.execute(sql, args).fetchall()


def mirror_lines(store: Path, family: str) -> list[dict[str, Any]]:
    path = store / "append-log" / f"{family}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def portal(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run taugrid-portal in-process through the same error/exit-code wrapper as the binary."""
    from tau.portal.cli.main import cli

    code = run_cli(cli, "taugrid-portal", list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def portal_process(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau.portal", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )

"""`tau run`'s persistent flags: `--project` and `--system-namespace` given before a verb reach
every lifecycle verb; any other `tau run` flag before a verb is refused, never dropped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TAU = str(Path(sys.executable).parent / "tau")
NO_CATALOG = "error: --project requires tau.projects.yaml at the Git worktree root"


def tau(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd), "KUBECONFIG": str(cwd / "absent")}
    return subprocess.run(
        [TAU, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120
    )


@pytest.mark.parametrize(
    "verb",
    [
        ("status", "x1"),
        ("logs", "x1"),
        ("cancel", "x1"),
        ("get", "x1"),
        ("list",),
        ("history", "x1"),
    ],
    ids=lambda verb: verb[0],
)
def test_project_before_a_lifecycle_verb_routes_that_verb(tmp_path: Path, verb) -> None:
    result = tau(tmp_path, "run", "--project", "vision", *verb)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [NO_CATALOG]


def test_a_submission_flag_before_a_verb_is_refused_naming_it(tmp_path: Path) -> None:
    result = tau(tmp_path, "run", "--context", "prod", "status", "x1")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --context before `status` would be ignored (only --project and "
        "--system-namespace carry over to a verb); put it after the verb: "
        "`tau run status --context ...`"
    ]


def test_several_dropped_flags_are_all_named(tmp_path: Path) -> None:
    result = tau(tmp_path, "run", "--local", "-o", "json", "list")
    assert result.returncode == 2
    assert "--output, --local before `list` would be ignored" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_verb_after_persistent_flags_still_gets_its_own_help(tmp_path: Path) -> None:
    result = tau(tmp_path, "run", "--project", "vision", "status", "--help")
    assert result.returncode == 0
    assert result.stdout.startswith("Usage: tau run [TARGET] status [OPTIONS] NAME")


def test_a_target_after_flags_is_still_submitted_not_a_verb(tmp_path: Path) -> None:
    result = tau(tmp_path, "run", "--dry-run=client", "train", "extra")
    assert result.returncode == 2
    assert "unexpected extra arguments after the target: extra" in result.stderr

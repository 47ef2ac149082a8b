"""Lifecycle verbs refuse bad flag combinations before contacting any cluster (exit 2, one
line naming the flag), through the installed `tau` console script."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TAU = shutil.which("tau", path=str(Path(sys.executable).parent)) or "tau"


def tau(*args: str, cwd: Path, columns: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TAU_CONFIG_DIR": str(cwd / "tau-config"), "KUBECONFIG": "/nonexistent"}
    if columns:
        env["COLUMNS"] = columns
    env.pop("TAU_CONTEXT", None)
    return subprocess.run(
        [TAU, *args], cwd=cwd, capture_output=True, text=True, check=False, env=env
    )


BAD_FLAGS = [
    (("run", "status", "x", "--watch", "-o", "json"), "--output json cannot be used with --watch"),
    (("run", "status", "x", "--watch", "-o", "yaml"), "--output yaml cannot be used with --watch"),
    (("run", "status", "x", "-o", "yaml", "--diagnostic-hints"), "cannot be used with --output"),
    (("run", "history", "x", "-o", "xml"), "--output must be table, json or yaml"),
    (("run", "status", "x", "--watch", "--diagnostic-hints"), "cannot be used with --watch"),
    (("run", "status", "x", "-o", "json", "--diagnostic-hints"), "cannot be used with --output"),
    (("run", "status", "x", "-o", "xml"), "--output must be table, json or yaml"),
    (("run", "status", "x", "--interval", "0s"), "--interval must be > 0"),
    (("run", "status", "x", "--max-iterations", "-1"), "--max-iterations must be >= 0"),
    (("run", "list", "-o", "xml"), "--output must be table, json or yaml"),
    (("run", "get", "x", "--artifact", "../secrets"), "not a clean path inside the results"),
    (("run", "get", "x", "-o", "xml"), "--output must be table, json, yaml or raw"),
    (("run", "cancel", "x", "--teardown-timeout", "0s"), "--teardown-timeout must be > 0"),
    (("run", "cancel", "x", "--timeout", "0s"), "--timeout must be > 0"),
    (
        ("run", "resume", "x", "-c", "tau.yaml", "--from", "relative/dir"),
        "--from must be an absolute path (starts with /); got 'relative/dir'",
    ),
    (("run", "resume", "x", "-c", "t.yaml", "--dry-run", "m"), "--dry-run must be one of"),
    (("run", "--dry-run=maybe"), "--dry-run must be one of: client, server"),
    (("logs", "x", "--kusto-endpoint", "http://adx.example"), "--kusto-endpoint must be an https"),
    (
        ("run", "logs", "x", "--kusto-endpoint", "https://adx.example/db"),
        "--kusto-endpoint must be an https",
    ),
]


@pytest.mark.parametrize(("args", "message"), BAD_FLAGS)
def test_bad_flags_fail_fast_with_one_line(tmp_path, args, message):
    result = tau(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("error: ") == 1 and message in result.stderr
    assert "Traceback" not in result.stderr


def test_every_lifecycle_verb_is_listed_and_logs_is_a_root(tmp_path):
    help_text = tau("run", "--help", cwd=tmp_path).stdout
    for verb in ("status", "list", "logs", "get", "cancel", "resume", "history"):
        assert verb in help_text
    root = tau("--help", cwd=tmp_path).stdout
    assert "logs" in root
    logs_help = tau("logs", "--help", cwd=tmp_path).stdout
    for flag in ("--container", "--all-containers", "--previous", "--timestamps", "--prefix",
                 "--tail", "--follow", "--workspace", "--context"):  # fmt: skip
        assert flag in logs_help


def test_tau_logs_takes_the_same_flags_as_its_compatibility_path_tau_run_logs(tmp_path):
    def flags(*args: str) -> set[str]:
        shown = tau(*args, "--help", cwd=tmp_path, columns="200").stdout
        return set(re.findall(r"(?m)^  (?:-\w, )?(--[\w-]+)", shown))

    assert flags("logs") == flags("run", "logs")
    assert {"--follow", "--kusto-endpoint", "--workspace", "--local"} <= flags("logs")


@pytest.mark.parametrize("verb", ["status", "list", "get", "cancel", "resume", "history", "logs"])
def test_every_lifecycle_verb_help_shows_examples_of_itself(tmp_path, verb):
    args = ("logs", "--help") if verb == "logs" else ("run", verb, "--help")
    shown = tau(*args, cwd=tmp_path, columns="80")
    assert shown.returncode == 0, shown.stderr
    lines = [line.strip() for line in shown.stdout.splitlines()]
    examples = lines[lines.index("Examples:") + 1 :]
    examples = examples[: examples.index("")]
    prefix = "tau logs " if verb == "logs" else f"tau run {verb} "
    # every line is a whole example: none wraps on an 80-column terminal
    assert examples and all(line.startswith(prefix) for line in examples), examples


def test_list_help_does_not_describe_local_as_a_run_name(tmp_path):
    shown = tau("run", "list", "--help", cwd=tmp_path).stdout
    assert "List the local engine's runs" in shown and "NAME" not in shown

"""Hostile run configs end in one line naming the field and line: no crash, echo or hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOKEN = "hf_" + "Zq8" * 12
LONG_TOKEN = "github_pat_" + "Zq8" * 20  # longer than any shortened value
BASE = "name: demo\nengine: job\nentrypoint: train.py\ncompute: {gpus: 0}\n"


def validate(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "train.py").write_text("print('hi')\n")
    (tmp_path / "tau.yaml").write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "tau", "run", *args]
        if args
        else [sys.executable, "-m", "tau", "run", "validate", "--config", "tau.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "HOME": str(tmp_path)},
        check=False,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize(
    "text",
    [
        BASE + f"runtime:\n  image: python:3.12\n  env_secret: {{HF_TOKEN: {TOKEN!r}}}\n",
        BASE + "runtime:\n  image: python:3.12\n  env_secret: {HF_TOKEN: plain-password-1}\n",
        f"name: demo\nengine: {TOKEN}\nentrypoint: train.py\n",
        BASE + f"{TOKEN}: 1\n",
        BASE + f"unknown_block: {{nested: {TOKEN}}}\n",
        BASE + f"runtime:\n  image: python:3.12\n  env: {{API_KEY: [{TOKEN}]}}\n",
        BASE + f"resilience: {LONG_TOKEN}\n",
        BASE.replace("gpus: 0", f"gpus: !!int {LONG_TOKEN}"),
    ],
)
def test_no_error_prints_a_secret_value(tmp_path: Path, text: str) -> None:
    result = validate(tmp_path, text)
    assert result.returncode == 2
    output = result.stdout + result.stderr
    assert TOKEN not in output and "plain-password-1" not in output
    assert TOKEN[3:15] not in output and LONG_TOKEN[11:23] not in output


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        (
            "name: demo\nengine: !!bool maybe\nentrypoint: train.py\n",
            "tau.yaml:2:1: engine",
            "'maybe' is not a valid bool",
        ),
        ("loop: &l [*l]\n", "tau.yaml:1:7", "recursive YAML alias"),
        (
            BASE + "runtime: !custom {image: x}\n",
            "tau.yaml:5:10",
            "YAML tag '!custom' is not allowed",
        ),
        (
            BASE.replace("gpus: 0", "gpus: " + "9" * 40),
            "tau.yaml:4:11: compute.gpus",
            "does not fit in 64 bits",
        ),
        (
            BASE.replace("gpus: 0", "gpus: " + "9" * 5000),
            "tau.yaml:4:11: compute.gpus",
            "is not a valid int",
        ),
        (
            BASE.replace("train.py", '"tr\\0ain.py"'),
            "tau.yaml:3:13: entrypoint",
            "control character \\x00",
        ),
    ],
)
def test_broken_yaml_and_values_are_one_line_with_file_line_and_field(
    tmp_path: Path, text: str, where: str, problem: str
) -> None:
    line = one_error_line(validate(tmp_path, text))
    assert line.startswith(f"error: {where}") and problem in line, line


@pytest.mark.timeout(30)
def test_an_alias_bomb_config_is_refused_at_its_line(tmp_path: Path) -> None:
    bomb = "x0: &x0 [" + ", ".join(["a"] * 10) + "]\n"
    bomb += "".join(f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * 10) + "]\n" for i in range(1, 9))
    line = one_error_line(validate(tmp_path, BASE + bomb))
    assert line.startswith("error: tau.yaml:9:") and "too many nodes" in line


@pytest.mark.timeout(60)
def test_a_symlink_loop_entrypoint_is_a_field_error_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    text = BASE.replace("train.py", "a.py") + "runtime: {image: python:3.12}\n"
    for args in ((), ("--config", "tau.yaml", "--dry-run=client")):
        line = one_error_line(validate(tmp_path, text, *args))
        assert "entrypoint" in line and "a.py" in line, line


MEASURE = """
import resource, subprocess, sys
result = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(__import__("json").dumps({"rc": result.returncode, "stderr": result.stderr, "kib": peak}))
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("entrypoint", ["a/" * 1_500_000 + "x.py", "x" * 3_000_000 + ".py"])
def test_a_3_megabyte_entrypoint_is_refused_in_bounded_time_and_memory(
    tmp_path: Path, entrypoint: str
) -> None:
    (tmp_path / "tau.yaml").write_text(BASE.replace("train.py", entrypoint))
    measured = subprocess.run(
        [
            sys.executable,
            "-c",
            MEASURE,
            sys.executable,
            "-m",
            "tau",
            "run",
            "validate",
            "--config",
            "tau.yaml",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=50,
        check=True,
    )
    result = json.loads(measured.stdout)
    assert result["rc"] == 2 and result["kib"] < 300 * 1024, result["kib"]
    assert result["stderr"].startswith(
        f"error: tau.yaml:3:1: entrypoint is {len(entrypoint)} bytes long; a path has at most"
    )
    assert len(result["stderr"]) < 300


def test_an_8_megabyte_name_comes_back_short(tmp_path: Path) -> None:
    line = one_error_line(validate(tmp_path, BASE.replace("demo", "X" * 8_000_000)))
    assert len(line) < 300
    assert line.startswith('error: tau.yaml:1:1: name "XXXXXXXX') and "(8000000 characters)" in line


def test_terminal_escapes_in_a_value_are_refused_and_never_printed_raw(tmp_path: Path) -> None:
    line = one_error_line(validate(tmp_path, BASE.replace("demo", '"demo\\e[2J\\nx"')))
    assert "\x1b" not in line and line.startswith("error: tau.yaml:1:7: name: contains the")


def test_a_client_dry_run_never_prints_a_pasted_token(tmp_path: Path) -> None:
    env = f"runtime:\n  image: python:3.12\n  env: {{HF_TOKEN: plain-password-1, NOTE: {TOKEN}}}\n"
    result = validate(tmp_path, BASE + env, "--config", "tau.yaml", "--dry-run=client")
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert TOKEN not in output and TOKEN[3:15] not in output and "plain-password-1" not in output
    assert "<redacted>" in result.stdout

"""The public surface of `tau`: a closed set of roots, each with working subcommands."""

from __future__ import annotations

import re
import subprocess
import sys

from tau.cli.main import PUBLIC_ROOTS, ROOTS

LEGACY_ROOTS = (
    "ray",
    "model",
    "dataset",
    "exp",
    "queue",
    "status",
    "cancel",
    "topology",
    "lanes",
    "storage",
    "eval",
    "shell",
    "submit",
    "finetune",
    "retry",
)


def tau(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau", *args], capture_output=True, text=True, check=False
    )


def listed_roots(help_text: str) -> list[str]:
    section = help_text.split("Commands:", 1)[1]
    return re.findall(r"^\s{2}(\S+)\s", section, flags=re.MULTILINE)


def test_registered_roots_come_only_from_the_eight_public_roots() -> None:
    assert set(ROOTS) <= set(PUBLIC_ROOTS)
    assert PUBLIC_ROOTS == (
        "cluster",
        "workspace",
        "run",
        "logs",
        "serve",
        "data",
        "python",
        "version",
    )


def test_help_shows_exactly_the_registered_roots_in_public_order() -> None:
    result = tau("--help")
    assert result.returncode == 0
    assert listed_roots(result.stdout) == [r for r in PUBLIC_ROOTS if r in ROOTS]


def test_legacy_roots_do_not_exist() -> None:
    for legacy in LEGACY_ROOTS:
        result = tau(legacy)
        assert result.returncode == 2, legacy
        assert "No such command" in result.stderr


def test_version_prints_the_version_and_short_prints_it_bare() -> None:
    from tau import __version__

    assert __version__ in tau("version").stdout
    assert tau("version", "--short").stdout == f"{__version__}\n"


def test_serve_is_registered_with_its_four_verbs() -> None:
    assert "serve" in ROOTS
    result = tau("serve", "--help")
    assert result.returncode == 0
    for verb in ("deploy", "status", "scale", "delete"):
        assert verb in result.stdout
    assert "workspace.connection.yaml" in result.stdout

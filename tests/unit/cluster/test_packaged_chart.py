"""An installed tau (no source checkout) still carries the chart explain-values documents."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from .conftest import ROOT


def _installed_wheel(tmp_path: Path) -> Path:
    """Build the wheel with the project's own backend and unpack it as site-packages."""
    dist = tmp_path / "dist"
    built = subprocess.run(
        [sys.executable, "-c", f"import hatchling.build as b; print(b.build_wheel({str(dist)!r}))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    site = tmp_path / "site"
    with zipfile.ZipFile(dist / built.stdout.strip().splitlines()[-1]) as wheel:
        wheel.extractall(site)
    return site


def test_the_wheel_ships_the_chart_and_explain_values_finds_it_without_a_checkout(tmp_path):
    site = _installed_wheel(tmp_path)
    packaged = site / "tau" / "_charts" / "taugrid"
    assert (packaged / "values.yaml").read_text() == (
        ROOT / "charts" / "taugrid" / "values.yaml"
    ).read_text()
    assert (packaged / "charts" / "tau-core-controller" / "crds").is_dir()

    env = {**os.environ, "PYTHONPATH": str(site)}
    located = subprocess.run(
        [
            sys.executable,
            "-c",
            "from tau.cluster import values_reference as v; print(v.default_chart())",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(located.stdout.strip()) == packaged.resolve()

    explained = subprocess.run(
        [sys.executable, "-m", "tau", "cluster", "explain-values"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("# TauGrid install values")
    assert "| `components.kueue.enabled` | boolean | `true` |" in explained.stdout

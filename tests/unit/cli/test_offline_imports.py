"""Offline commands never load the Kubernetes client, nor tau's own layer over it (`tau.kube`).

A researcher validates, explains and previews a run config on a laptop with no cluster and,
often, without the `kube` extra installed; the client is also the costliest import there is.
Each command runs in a fresh interpreter (as `tau` does) from a private Tau config dir, so no
saved connection sends the preview to a live workspace; the probe then reads `sys.modules`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
QUICKSTART = REPO / "examples" / "quickstart"
TORCHRUN = REPO / "examples" / "torchrun"

# Runs the CLI as the console script does, then reports what it imported.
PROBE = """
import json, sys
from tau.cli.main import cli, run
code = run(cli, "tau", sys.argv[2:])
with open(sys.argv[1], "w") as report:
    json.dump({"code": code, "modules": sorted(sys.modules)}, report)
"""

OFFLINE = [
    pytest.param(QUICKSTART, ("--help",), id="tau --help"),
    pytest.param(QUICKSTART, ("version",), id="version"),
    pytest.param(QUICKSTART, ("run", "--help"), id="run --help"),
    pytest.param(QUICKSTART, ("run", "validate", "train"), id="run validate"),
    pytest.param(QUICKSTART, ("run", "validate", "ray-tune"), id="run validate rayjob"),
    pytest.param(QUICKSTART, ("run", "schema"), id="run schema"),
    pytest.param(QUICKSTART, ("run", "explain-config"), id="run explain-config"),
    pytest.param(
        QUICKSTART, ("run", "explain-config", "--format", "text"), id="run explain-config text"
    ),
    pytest.param(QUICKSTART, ("run", "train", "--dry-run=client"), id="run TARGET dry-run job"),
    pytest.param(
        QUICKSTART,
        ("run", "ray-tune", "--dry-run=client", "-o", "json"),
        id="run TARGET dry-run rayjob json",
    ),
    pytest.param(
        TORCHRUN, ("run", "train", "--dry-run=client"), id="run TARGET dry-run indexed job"
    ),
    pytest.param(QUICKSTART, ("cluster", "explain-values"), id="cluster explain-values"),
]


def imported_by(
    args: tuple[str, ...], cwd: Path, tmp_path: Path, env: dict[str, str] | None = None
) -> tuple[int, list[str]]:
    """The exit code of `tau ARGS` and every module it had imported when it returned."""
    report = tmp_path / "modules.json"
    config_dir = tmp_path / "tau-config"
    config_dir.mkdir(exist_ok=True)
    environment = {**os.environ, "TAU_CONFIG_DIR": str(config_dir), "PYTHONPATH": str(REPO)}
    environment.pop("TAU_CONTEXT", None)
    environment.update(env or {})
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(report), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr  # the probe itself finished
    outcome = json.loads(report.read_text())
    return outcome["code"], outcome["modules"]


def kube_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] == "kubernetes" or m.startswith("tau.kube")]


@pytest.mark.parametrize(("cwd", "args"), OFFLINE)
def test_an_offline_command_imports_no_kubernetes_client(
    cwd: Path, args: tuple[str, ...], tmp_path: Path
) -> None:
    code, modules = imported_by(args, cwd, tmp_path)
    assert code == 0
    assert kube_modules(modules) == []


# What only `explain-config --format text` prints through: rich's console and markup.
RICH_BY_DESIGN = {"run explain-config text"}


@pytest.mark.parametrize(("cwd", "args"), OFFLINE)
def test_an_offline_command_imports_no_rich_unless_it_prints_through_it(
    cwd: Path, args: tuple[str, ...], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Help, tables piped and plain lines are click's; rich costs more to import than tau's
    own validate path, so it loads only where its markup is the output."""
    code, modules = imported_by(args, cwd, tmp_path)
    assert code == 0
    rich = [m for m in modules if m.split(".")[0] == "rich"]
    expected = request.node.callspec.id in RICH_BY_DESIGN
    assert bool(rich) == expected, rich


# `tau run` verbs that the validate and preview paths must not define, nor the engines
# behind a submission (the local engine's run records, the cluster backend).
LIFECYCLE = ("tau.cli.run_lifecycle", "tau.run.cluster", "tau.run.local", "tau.engine")


@pytest.mark.parametrize(
    ("cwd", "args"),
    [p for p in OFFLINE if p.id and p.id.startswith(("run validate", "run TARGET dry-run"))],
)
def test_validate_and_client_dry_run_load_no_lifecycle_verbs_or_backends(
    cwd: Path, args: tuple[str, ...], tmp_path: Path
) -> None:
    code, modules = imported_by(args, cwd, tmp_path)
    assert code == 0
    assert [m for m in modules if m.startswith(LIFECYCLE)] == []


def test_scaffolding_a_repository_imports_no_kubernetes_client(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    args = ("workspace", "init-repo", "demo", "--image", "ghcr.io/acme/demo:1", "--output")
    code, modules = imported_by((*args, str(out)), tmp_path, tmp_path)
    assert code == 0
    assert (out / "tau" / "train.yaml").is_file()
    assert kube_modules(modules) == []


def test_a_cluster_command_is_seen_loading_the_client(tmp_path: Path) -> None:
    """The probe's control: `tau run list` reaches for the cluster, so both show up."""
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("{}\n")
    code, modules = imported_by(
        ("run", "list", "-n", "research", "--context", "absent"),
        QUICKSTART,
        tmp_path,
        env={"KUBECONFIG": str(kubeconfig)},
    )
    assert code == 1  # no such context: a runtime error, after loading the client
    assert "kubernetes" in modules
    assert "tau.kube" in modules

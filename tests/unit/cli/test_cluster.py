"""`tau cluster` from the command line: offline dry-run, explain-values and usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.unit.closed_port import closed_port_kubeconfig

ROOT = Path(__file__).resolve().parents[3]
CHART = str(ROOT / "charts" / "taugrid")
BUNDLE = str(ROOT / "charts" / "taugrid-bundle")
OFFLINE = [
    "--set",
    "components.kueue.enabled=false",
    "--set",
    "components.kuberayOperator.enabled=false",
]


def tau(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # hack/setup installs helm into .venv/bin; make it findable when pytest runs without it on PATH.
    path = os.pathsep.join([str(ROOT / ".venv" / "bin"), os.environ.get("PATH", "")])
    merged = {**os.environ, "PATH": path, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "tau", "cluster", *args],
        capture_output=True,
        text=True,
        check=False,
        env=merged,
    )


def test_dry_run_prints_the_plan_and_render_summary_without_a_cluster(tmp_path):
    done = tau(
        "install",
        "--chart",
        CHART,
        "--dry-run",
        *OFFLINE,
        env={"KUBECONFIG": str(tmp_path / "none")},
    )
    assert done.returncode == 0, done.stderr
    assert "TauGrid install plan" in done.stderr
    assert "TauGrid render summary (nothing was applied)" in done.stdout
    assert "ClusterQueue" in done.stdout and "TauCluster" in done.stdout
    lines = [line.split() for line in done.stdout.splitlines()]
    assert lines[1] == ["DaemonSet", "13"]  # the largest kind comes first


def test_dry_run_json_counts_objects(tmp_path):
    done = tau("install", "--chart", CHART, "--dry-run", "-o", "json", *OFFLINE)
    data = json.loads(done.stdout)
    counts = {item["kind"]: item["count"] for item in data["kinds"]}
    assert counts["CustomResourceDefinition"] == 3 and counts["ResourceFlavor"] == 2
    assert data["total"] == sum(counts.values())


def test_dry_run_of_a_checkout_previews_without_the_operators_and_says_so():
    done = tau("install", "--chart", CHART, "--dry-run")
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 2
    assert "kueue is not part of" in notes[0] and "charts/taugrid-bundle" in notes[0]
    assert "kuberay-operator is not part of" in notes[1]
    assert done.stdout == tau("install", "--chart", CHART, "--dry-run", *OFFLINE).stdout


def test_dry_run_of_the_unfetched_bundle_previews_without_its_operators_and_says_so():
    done = tau("install", "--chart", BUNDLE, "--dry-run")
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 2
    assert "kueue is not vendored" in notes[0] and "helm dependency build" in notes[0]
    assert done.stdout == tau("install", "--chart", CHART, "--dry-run", *OFFLINE).stdout


def test_dry_run_with_values_that_trip_a_guard_is_one_line():
    done = tau(
        "install", "--chart", CHART, "--dry-run", *OFFLINE, "--set", "gpu-monitoring.namespace=x"
    )
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith("error: helm failed: gpu-monitoring.namespace")
    )


def test_usage_errors_exit_2():
    assert tau("install", "--chart", CHART, "--dry-run", "--timeout", "soon").returncode == 2
    assert tau("install", "--chart", CHART, "--dry-run", "-f", "missing.yaml").returncode == 2
    done = tau("uninstall")
    assert done.returncode == 2 and "--yes" in done.stderr
    done = tau("validate", "nodes", "--gpu-class", "tpu-v5")
    assert done.returncode == 2 and "not a supported class" in done.stderr


def test_missing_helm_is_a_clear_runtime_error(tmp_path):
    done = tau("install", "--chart", CHART, "--dry-run", env={"PATH": str(tmp_path)})
    assert done.returncode == 1
    assert "helm not found on PATH" in done.stderr


def test_explain_values_documents_the_distribution():
    done = tau("explain-values")
    assert done.returncode == 0
    assert "| `baselineQueue.gpu.flavors` |" in done.stdout
    assert "| `tau-core-controller.tauCluster.workloadProfiles` |" in done.stdout


def test_validate_installation_against_a_closed_port_fails_at_once(tmp_path):
    kubeconfig = closed_port_kubeconfig(tmp_path / "kubeconfig")
    done = tau("validate", "installation", "--timeout", "10m", env={"KUBECONFIG": str(kubeconfig)})
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: apiserver unavailable:")
    assert "read the server version" in lines[0] and "(owner: " in lines[0]


def test_explain_values_names_a_chart_path_that_is_not_a_chart(tmp_path):
    done = tau("explain-values", "--chart", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: --chart {tmp_path}: not a chart directory")

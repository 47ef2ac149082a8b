"""The testinfra suite runner: an operator's `--suite DIR` loaded, run and read back.

The suites run for real (pytest + testinfra in a child process, `local://` as the host), so
these pin down what an operator writing checks relies on: the `degraded` marker, `facts`, a
check that cannot run, a suite that hangs, and a broken or empty directory refused before any
pod exists.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tau.cluster import suites
from tau.cluster.probe import DEGRADED, HEALTHY, UNHEALTHY, UNKNOWN, GpuNode, rate
from tau.errors import RuntimeFailure, UsageError

ROOT = Path(__file__).resolve().parents[3]
NODE = GpuNode("node-a", "none", 0)


def suite(tmp_path: Path, body: str, name: str = "test_site.py") -> Path:
    directory = tmp_path / "site-checks"
    directory.mkdir(exist_ok=True)
    (directory / name).write_text(textwrap.dedent(body))
    return directory


def run(directory: Path, timeout: float = 60) -> suites.SuiteResult:
    return suites.run([directory], "local://", options=["--tau-node-name=node-a"], timeout=timeout)


def test_operator_checks_rate_the_node_by_their_markers(tmp_path):
    directory = suite(
        tmp_path,
        """
        import pytest

        def test_tmp_exists(host, facts):
            facts["tmp"] = "yes"
            assert host.file("/tmp").is_directory

        @pytest.mark.degraded
        def test_mirror_configured(node):
            assert node.file("/nonexistent/mirror.conf").exists, "registry mirror not configured"

        def test_node_under_test_is_named(tau_node):
            assert tau_node.name == "node-a" and tau_node.source == "none"
        """,
    )
    result = run(directory)
    assert result.error == ""
    assert result.facts == {"tmp": "yes"}
    outcomes = {c.name: c.outcome for c in result.checks}
    assert outcomes == {
        "test_site.py::test_tmp_exists": suites.PASSED,
        "test_site.py::test_mirror_configured": suites.FAILED,
        "test_site.py::test_node_under_test_is_named": suites.PASSED,
    }
    health = rate(NODE, result)
    assert (health.status, health.reasons) == (DEGRADED, ["registry mirror not configured"])


def test_an_unmarked_failure_is_unhealthy_and_a_bare_assert_names_its_check(tmp_path):
    directory = suite(
        tmp_path,
        """
        def test_ntp_runs(host):
            assert host.file("/nonexistent/chrony.conf").exists
        """,
    )
    health = rate(NODE, run(directory))
    assert health.status == UNHEALTHY
    (reason,) = health.reasons
    assert reason.startswith("test_site.py::test_ntp_runs failed: assert False")


def test_a_check_whose_setup_fails_makes_the_node_unknown(tmp_path):
    directory = suite(
        tmp_path,
        """
        import pytest

        @pytest.fixture
        def inventory():
            raise RuntimeError("inventory service unreachable")

        def test_node_is_in_inventory(inventory):
            assert inventory
        """,
    )
    health = rate(NODE, run(directory))
    assert health.status == UNKNOWN
    assert health.pod_error == (
        "test_site.py::test_node_is_in_inventory could not run: "
        "RuntimeError: inventory service unreachable"
    )


def test_a_suite_that_hangs_is_stopped_at_the_timeout(tmp_path):
    directory = suite(
        tmp_path,
        """
        def test_hangs(host):
            host.run("sleep 30")
        """,
    )
    result = run(directory, timeout=3)
    assert result.error == "checks did not finish within 3s"
    assert rate(NODE, result).status == UNKNOWN


def test_skips_are_not_failures(tmp_path):
    directory = suite(
        tmp_path,
        """
        import pytest

        def test_gpu_only(tau_node):
            if tau_node.source == "none":
                pytest.skip("no GPU")
        """,
    )
    result = run(directory)
    assert [(c.outcome, c.message) for c in result.checks] == [(suites.SKIPPED, "no GPU")]
    assert rate(NODE, result).status == HEALTHY


def test_collect_refuses_a_broken_or_empty_suite_naming_the_flag(tmp_path):
    broken = suite(tmp_path, "def test_x(:\n")
    with pytest.raises(UsageError, match=r"^--suite: cannot load .*test_site\.py.*SyntaxError"):
        suites.collect([suites.NODE_SUITE, broken], [broken])
    empty = tmp_path / "empty"
    (empty / "notes").mkdir(parents=True)
    (empty / "helpers.py").write_text("X = 1\n")
    with pytest.raises(UsageError, match=r"--suite .*empty: no checks found"):
        suites.collect([suites.NODE_SUITE, empty], [empty])
    with pytest.raises(UsageError, match=r"--suite nowhere: not a directory"):
        suites.suite_dirs(["nowhere"])


def test_collect_counts_the_shipped_checks_and_an_operator_suite(tmp_path):
    good = suite(tmp_path, "def test_one(host):\n    pass\n")
    shipped = suites.collect([suites.NODE_SUITE], [])
    assert shipped >= 10
    assert suites.collect([suites.NODE_SUITE, good], [good]) == shipped + 1


def test_missing_kubectl_is_one_line_naming_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeFailure) as caught:
        suites.require_kubectl("tau cluster validate nodes")
    line = caught.value.one_line()
    assert "kubectl not found on PATH" in line and "install kubectl" in line
    assert "\n" not in line


def test_validate_nodes_without_kubectl_exits_1_with_one_line(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path), "KUBECONFIG": str(tmp_path / "none")}
    done = subprocess.run(
        [sys.executable, "-m", "tau", "cluster", "validate", "nodes"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: kubectl not found on PATH: `tau cluster validate nodes`")


def test_validate_nodes_refuses_a_broken_suite_before_touching_a_cluster(tmp_path):
    broken = suite(tmp_path, "import missing_module_of_this_site\n\ndef test_x():\n    pass\n")
    kubectl = tmp_path / "bin" / "kubectl"
    kubectl.parent.mkdir()
    kubectl.write_text("#!/bin/sh\nexit 1\n")
    kubectl.chmod(0o755)
    path = os.pathsep.join([str(kubectl.parent), os.environ["PATH"]])
    env = {**os.environ, "PATH": path, "KUBECONFIG": str(tmp_path / "none")}
    done = subprocess.run(
        [sys.executable, "-m", "tau", "cluster", "validate", "nodes", "--suite", str(broken)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "--suite: cannot load" in line and "missing_module_of_this_site" in line


def test_an_installation_suite_refuses_the_degraded_marker(tmp_path):
    marked = suite(
        tmp_path, "import pytest\n\n@pytest.mark.degraded\ndef test_x(host):\n    pass\n"
    )
    assert suites.collect([marked], [marked]) == 1
    with pytest.raises(
        UsageError, match=r"^--suite: test_site.py::test_x is marked degraded, which only node"
    ):
        suites.collect([marked], [marked], rates_nodes=False)

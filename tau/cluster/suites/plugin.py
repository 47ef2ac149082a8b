"""The pytest plugin every `tau cluster validate` suite runs with (shipped and `--suite DIR`).

It is loaded into the pytest process the suite runner starts (`-p tau.cluster.suites.plugin`)
and gives checks what testinfra alone does not know:

* `node`: the testinfra host *as the node itself*. testinfra's kubectl backend runs each
  command in the probe pod's container (`kubectl exec`); `node` runs the same command under
  `chroot /host`, the node's root filesystem the probe pod mounts, so `node.file`,
  `node.process`, `node.run("nvidia-smi")` see the node's filesystem, processes and tools.
  (chroot rather than nsenter into PID 1's namespaces: it needs no ptrace access to the
  node's init, which a sandboxed init refuses even to root.)
  Any other backend (`local://` on the node itself, `ssh://node`) already is the node.
* `tau_node`: what the Kubernetes API says about the node (name, GPU source, GPU count), so a
  check can compare what it finds with what the node advertises.
* `facts`: values a check observed (`facts["gpu_count"] = "8"`), reported in the table and
  in `-o json`'s `probe` object.
* the `degraded` marker: a failing check marked `@pytest.mark.degraded` rates the node
  DEGRADED; any other failing check rates it UNHEALTHY.

At the end it writes every check's outcome, the facts and the collection errors as JSON to
`--tau-report`, which the runner maps to the node's health (`tau.cluster.suites.result_of`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import testinfra.host
from testinfra.backend.kubectl import KubectlBackend

from tau.cluster.suites import HOST_ROOT

CHROOT = f"chroot {HOST_ROOT} /bin/sh -c %s"

_RECORDER = "tau-recorder"


class NodeBackend(KubectlBackend):  # type: ignore[misc]  # testinfra ships no type hints
    """testinfra's kubectl backend with every command run in the node's root filesystem."""

    def get_command(self, command: str, *args: str) -> str:
        return str(self.quote(CHROOT, super().get_command(command, *args)))


@dataclass(frozen=True)
class NodeUnderTest:
    name: str
    source: str  # device-plugin | mig | dra | none
    gpus: int  # whole GPUs the node advertises (0 for mig and none)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tau", "tau cluster validate")
    group.addoption("--tau-report", default="", help="Write the checks' results here (JSON).")
    group.addoption("--tau-node-name", default="", help="The node under test.")
    group.addoption("--tau-gpu-source", default="none", help="device-plugin|mig|dra|none")
    group.addoption("--tau-gpu-count", type=int, default=0, help="Whole GPUs advertised.")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "degraded: a failure of this check rates the node DEGRADED, not UNHEALTHY"
    )
    config.pluginmanager.register(Recorder(config.getoption("--tau-report")), _RECORDER)


@pytest.fixture(scope="session")
def tau_node(pytestconfig: pytest.Config) -> NodeUnderTest:
    return NodeUnderTest(
        pytestconfig.getoption("--tau-node-name"),
        pytestconfig.getoption("--tau-gpu-source"),
        pytestconfig.getoption("--tau-gpu-count"),
    )


@pytest.fixture(scope="session")
def facts(pytestconfig: pytest.Config) -> dict[str, str]:
    recorder = pytestconfig.pluginmanager.get_plugin(_RECORDER)
    assert isinstance(recorder, Recorder)
    return recorder.facts


@pytest.fixture(scope="module")
def node(host: Any) -> Any:
    backend = host.backend
    if not isinstance(backend, KubectlBackend):
        return host
    inner = NodeBackend(
        backend.name,
        namespace=backend.namespace,
        container=backend.container,
        kubeconfig=backend.kubeconfig,
        context=backend.context,
    )
    seen = testinfra.host.Host(inner)
    inner.set_host(seen)
    return seen


def _message(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(crash.message if crash is not None else report.longrepr or "")
    first = text.strip().splitlines()[0] if text.strip() else ""
    for prefix in ("AssertionError: ", "Failed: "):
        first = first.removeprefix(prefix)
    return first


class Recorder:
    """Collects what the runner reads back: outcomes, facts, collection errors, files."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.checks: list[dict[str, str]] = []
        self.facts: dict[str, str] = {}
        self.errors: list[str] = []
        self.collected: list[dict[str, Any]] = []  # one entry per check

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.collected.extend(
            {"id": item.nodeid, "path": str(item.path), "degraded": "degraded" in item.keywords}
            for item in items
        )

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            lines = [line for line in str(report.longrepr).splitlines() if line.strip()]
            where = report.nodeid or "collection"
            self.errors.append(f"{where}: {lines[-1] if lines else 'error'}")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """One entry per check: its call outcome, or how its setup/teardown went wrong."""
        if report.when == "call" or (report.when == "setup" and not report.passed):
            outcome = "error" if report.failed and report.when == "setup" else report.outcome
        elif report.when == "teardown" and report.failed:
            outcome = "error"
        else:
            return
        self.checks.append(
            {
                "id": report.nodeid,
                "outcome": outcome,
                "severity": "degraded" if "degraded" in report.keywords else "unhealthy",
                "message": "" if report.passed else _message(report),
            }
        )

    def pytest_sessionfinish(self) -> None:
        if not self.target:
            return
        data = {
            "checks": self.checks,
            "facts": self.facts,
            "errors": self.errors,
            "collected": self.collected,
        }
        Path(self.target).write_text(json.dumps(data))

"""testinfra suites for `tau cluster validate`: where they run, and reading their results back.

pytest and testinfra run on the operator's side, in a child process of tau, and reach their
host through testinfra's kubectl backend (`kubectl://POD?namespace=NS&container=C`, one
`kubectl exec` per command). The pod a suite inspects therefore needs nothing but a shell:
no Python, no test code and no results travel into the privileged probe pod, and an
operator's `--suite DIR` runs from their checkout exactly as the shipped checks do. The child
process loads testinfra and `tau.cluster.suites.plugin` only (no other installed pytest
plugin, no pytest configuration of the directories), so a check's outcome does not depend on
what else is installed; the plugin writes each check's outcome and facts as JSON, read here.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tau.errors import RuntimeFailure, UsageError

NODE_SUITE = Path(__file__).parent / "nodes"
HOST_ROOT = "/host"  # where the probe pod mounts the node's / (the `node` fixture chroots)
PLUGIN = "tau.cluster.suites.plugin"
PASSED, FAILED, SKIPPED, ERROR = "passed", "failed", "skipped", "error"
DEGRADED_SEVERITY = "degraded"


@dataclass(frozen=True)
class Check:
    id: str  # pytest node id: file::test[host]
    outcome: str  # passed | failed | skipped | error
    severity: str  # unhealthy | degraded: what a failure means for the node
    message: str = ""

    @property
    def name(self) -> str:
        """`test_gpu.py::test_ecc[kubectl://pod]` -> `test_gpu.py::test_ecc` (host-free)."""
        path, _, test = self.id.partition("::")
        return f"{Path(path).name}::{test.split('[', 1)[0]}" if test else Path(path).name


@dataclass
class SuiteResult:
    checks: list[Check] = field(default_factory=list)
    facts: dict[str, str] = field(default_factory=dict)
    error: str = ""  # the suite did not run to its end (timeout, pytest crash): why


def require_testinfra(command: str) -> None:
    """pytest-testinfra importable, or one line naming the fix."""
    if importlib.util.find_spec("testinfra") is None:
        raise RuntimeFailure(
            f"`{command}` runs testinfra suites but pytest-testinfra is not installed",
            hint="pip install 'taugrid[validate]' (the platform operator's install)",
        )


def require_kubectl(command: str) -> None:
    """kubectl on PATH (testinfra's kubectl backend shells out to it), or one line."""
    if shutil.which("kubectl") is None:
        raise RuntimeFailure(
            f"kubectl not found on PATH: `{command}` runs its checks through testinfra's "
            "kubectl backend (kubectl exec)",
            hint="install kubectl, the Kubernetes CLI, or put it on PATH",
        )


def kubectl_host(pod: str, namespace: str, container: str, context: str = "") -> str:
    """The testinfra host spec of one container, through kubectl exec."""
    query = {"namespace": namespace, "container": container}
    if context:
        query["context"] = context
    return f"kubectl://{pod}?{urllib.parse.urlencode(query)}"


def suite_dirs(values: Sequence[str]) -> list[Path]:
    """`--suite DIR` values as directories, or a usage error naming the flag."""
    dirs = []
    for value in values:
        path = Path(value).expanduser()
        if not path.is_dir():
            raise UsageError(f"--suite {value}: not a directory of testinfra checks")
        dirs.append(path.resolve())
    return dirs


def _argv(dirs: Sequence[Path], work: Path, host: str, options: Sequence[str]) -> list[str]:
    ini = work / "pytest.ini"
    ini.write_text("[pytest]\n")
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-c",
        str(ini),
        "--rootdir",
        str(work),
        "--import-mode=importlib",
        "-p",
        "no:cacheprovider",
        "-p",
        "testinfra.plugin",
        "-p",
        PLUGIN,
        "--tau-report",
        str(work / "report.json"),
        "--hosts",
        host,
        *options,
        *(str(d) for d in dirs),
    ]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _pytest(argv: list[str], timeout: float) -> tuple[int | None, str]:
    """Run pytest in its own process group (its kubectl children die with it on timeout)."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
        start_new_session=True,
    )
    try:
        out, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None, ""
    return process.returncode, out


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def collect(
    dirs: Sequence[Path],
    operator_dirs: Sequence[Path],
    *,
    rates_nodes: bool = True,
    timeout: float = 60.0,
) -> int:
    """Import every check without running any: a broken or empty `--suite` is a usage error
    before any pod is created. Outside node suites (`rates_nodes=False`) the `degraded`
    marker would change nothing, so a check carrying it is refused. Returns the check count."""
    with tempfile.TemporaryDirectory(prefix="tau-suite-") as tmp:
        work = Path(tmp)
        argv = _argv(dirs, work, "kubectl://collect-only", ["--collect-only"])
        rc, out = _pytest(argv, timeout)
        report = work / "report.json"
        if rc is None or not report.is_file():
            raise RuntimeFailure(f"cannot load the validation checks: {_last_line(out)}")
        data = json.loads(report.read_text())
    if data["errors"]:
        raise UsageError(f"--suite: cannot load {data['errors'][0]}")
    collected = data["collected"]
    for directory in operator_dirs:
        if not any(directory in Path(item["path"]).parents for item in collected):
            raise UsageError(
                f"--suite {directory}: no checks found (test_*.py files with test_ functions)"
            )
    marked = next((item for item in collected if item["degraded"]), None)
    if not rates_nodes and marked is not None:
        raise UsageError(
            f"--suite: {Check(marked['id'], '', '').name} is marked degraded, which only node"
            " suites use"
            " (an installation check passes or fails)"
        )
    return len(collected)


def run(
    dirs: Sequence[Path], host: str, *, options: Sequence[str] = (), timeout: float
) -> SuiteResult:
    """Run the suites against one testinfra host and read back every check's outcome."""
    with tempfile.TemporaryDirectory(prefix="tau-suite-") as tmp:
        work = Path(tmp)
        rc, out = _pytest(_argv(dirs, work, host, options), max(timeout, 1.0))
        if rc is None:
            return SuiteResult(error=f"checks did not finish within {timeout:.0f}s")
        report = work / "report.json"
        if not report.is_file():
            return SuiteResult(error=f"checks did not run (pytest exit {rc}): {_last_line(out)}")
        data = json.loads(report.read_text())
    result = SuiteResult(
        checks=[Check(**item) for item in data["checks"]],
        facts={str(k): str(v) for k, v in data["facts"].items()},
    )
    if data["errors"]:
        result.error = f"cannot load {data['errors'][0]}"
    elif not result.checks:
        result.error = f"no checks ran (pytest exit {rc}): {_last_line(out)}"
    return result

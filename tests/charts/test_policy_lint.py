"""The rendered chart passes checkov's Kubernetes policies, except the findings that
tests/charts/policy_exceptions.yaml accepts with a reason.

Checkov is the real linter from PyPI (hack/setup/50-checkov.sh), run offline over the
objects of every template the chart renders: the GPU profile with GPU monitoring, the Portal
and the lifecycle recorder switched on, and the MultiKueue profile.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import PROFILES, ROOT

EXCEPTIONS = Path(__file__).with_name("policy_exceptions.yaml")
EVERYTHING_ON = [
    "components.gpuMonitoring.enabled=true",
    "taugrid-core.portal.enabled=true",
    "taugrid-core.portal.workloadNamespace=team-a",
    "taugrid-core.portal.jobs.scopeMode=workspace",
    "taugrid-core.lifecycleRecorder.enabled=true",
    "taugrid-core.lifecycleRecorder.targetNamespace=team-a",
    "taugrid-core.lifecycleRecorder.storeClaim=taugrid-store",
    "taugrid-core.lifecycleRecorder.cluster=local",
]


def checkov() -> str:
    found = shutil.which("checkov") or str(ROOT / ".venv" / "bin" / "checkov")
    if not Path(found).is_file():
        raise AssertionError("checkov is not installed: run hack/setup/50-checkov.sh")
    return found


def resource_name(reported: str) -> str:
    """Kind/name of checkov's resource id (Kind.namespace.name[.label-key-value...])."""
    kind, _namespace, name, *_labels = [*reported.split("."), "", ""]
    return f"{kind}/{name}"


@pytest.fixture(scope="module")
def findings(render: Callable[..., list[dict[str, Any]]], tmp_path_factory) -> set[tuple[str, str]]:
    folder = tmp_path_factory.mktemp("rendered")
    renders = {
        "gpu-everything-on": render(*EVERYTHING_ON, values=PROFILES["h200-pool"]),
        "multikueue": render(values=PROFILES["multikueue"]),
    }
    kinds = {d["kind"] for d in renders["gpu-everything-on"]}
    assert {"Deployment", "DaemonSet", "Role", "ClusterRole"} <= kinds
    for name, documents in renders.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump_all(documents))
    done = subprocess.run(
        [checkov(), "-d", str(folder), "--framework", "kubernetes", "--skip-download",
         "--quiet", "--compact", "-o", "json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    # 0: nothing failed; 1: findings (listed in the JSON); anything else: checkov broke.
    assert done.returncode in (0, 1), done.stderr[-2000:]
    reports = json.loads(done.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    assert sum(r["summary"]["resource_count"] for r in reports) > 20, "checkov saw the render"
    return {
        (failed["check_id"], resource_name(failed["resource"]))
        for report in reports
        for failed in report["results"]["failed_checks"]
    }


@pytest.fixture(scope="module")
def exceptions() -> list[dict[str, Any]]:
    entries = yaml.safe_load(EXCEPTIONS.read_text())
    for entry in entries:
        assert set(entry) == {"check", "resources", "why"}, entry
        assert entry["why"].strip(), f"{entry['check']} has no reason"
    return entries


def _accepted(finding: tuple[str, str], exceptions: list[dict[str, Any]]) -> bool:
    check, resource = finding
    return any(
        entry["check"] == check and any(fnmatch.fnmatch(resource, p) for p in entry["resources"])
        for entry in exceptions
    )


def test_every_finding_is_fixed_or_accepted_with_a_reason(findings, exceptions):
    unexplained = sorted(f for f in findings if not _accepted(f, exceptions))
    assert not unexplained, (
        "checkov findings neither fixed nor listed in tests/charts/policy_exceptions.yaml: "
        + ", ".join(f"{check} on {resource}" for check, resource in unexplained)
    )


def test_no_accepted_finding_is_stale(findings, exceptions):
    stale = [
        f"{entry['check']} on {pattern}"
        for entry in exceptions
        for pattern in entry["resources"]
        if not any(c == entry["check"] and fnmatch.fnmatch(r, pattern) for c, r in findings)
    ]
    assert not stale, f"exceptions that match no finding any more (remove them): {stale}"


def test_the_findings_the_issue_named_are_fixed(findings):
    # The Portal's init container has resources; our own pods run as a high uid.
    fixed = {("CKV_K8S_10", "Deployment/tau-portal"), ("CKV_K8S_13", "Deployment/tau-portal")}
    fixed |= {
        ("CKV_K8S_40", f"Deployment/{name}")
        for name in ("tau-core-controller", "tau-portal", "tau-lifecycle-recorder")
    }
    assert not fixed & findings


def test_node_problem_detector_has_startup_and_liveness_probes_on_its_healthz(render):
    [daemonset] = [
        d for d in render(*EVERYTHING_ON, values=PROFILES["h200-pool"]) if d["kind"] == "DaemonSet"
    ]
    [npd] = [
        c
        for c in daemonset["spec"]["template"]["spec"]["containers"]
        if c["name"] == "node-problem-detector"
    ]
    port = next(int(a.split("=")[1]) for a in npd["command"] if a.startswith("--port="))
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert npd[probe]["httpGet"] == {"path": "/healthz", "port": port}
    startup = npd["startupProbe"]
    # NPD serves /healthz only after the API server answered (up to 5 minutes).
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 300

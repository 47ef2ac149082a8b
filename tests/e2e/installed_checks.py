"""What an operator runs once TauGrid is installed, whichever path installed it.

`tau cluster install` (test_cluster_install_real_node.py) and the Pulumi dev stack
(test_infra_dev_stack.py) end in the same place: the release's controller and Portal on the
real node. Both are then checked the way the docs tell an operator to check them: `tau cluster
validate installation`, with an operator's testinfra suite run inside the installed controller's
container, and `tau cluster validate nodes --include-cpu` probing the real node the release runs
on. Each helper takes the suite's `tau` runner, so the environment (kubeconfig, PATH with
kubectl) is the installer's own.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller_harness import items

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

Tau = Callable[..., subprocess.CompletedProcess[str]]

# An operator's installation checks, run inside the controller's container: its image, the
# cluster DNS it resolves through, and a site file that this cluster lacks.
SITE_INSTALLATION_SUITE = """
def test_the_controller_image_carries_tau(host):
    assert host.run("python3 -c 'import tau.controller'").rc == 0


def test_cluster_dns_resolves_the_api_service(host):
    lookup = "import socket; socket.getaddrinfo('kubernetes.default.svc', 443)"
    assert host.run("python3 -c %s", lookup).rc == 0, "kubernetes.default.svc does not resolve"


def test_site_proxy_configured(host):
    assert host.file("/etc/site-proxy.conf").exists, "site proxy not configured"
"""
SITE_CHECKS = (
    "test_site.py::test_the_controller_image_carries_tau",
    "test_site.py::test_cluster_dns_resolves_the_api_service",
    "test_site.py::test_site_proxy_configured",
)
NODE_BASICS = (
    "test_node.py::test_kubelet_runs",
    "test_node.py::test_a_container_runtime_runs",
    "test_node.py::test_root_filesystem_has_room",
)


def installation_report(tau: Tau, scope: list[str], expected: dict[str, str]) -> None:
    """The readiness table lists every check with the status this release must have (SKIP
    where its values switch a component off) and ends READY."""
    done = tau("cluster", "validate", "installation", *scope, "--timeout", "2m")
    assert done.returncode == 0, done.stderr + done.stdout
    lines = done.stdout.splitlines()
    statuses = dict(_status_line(line) for line in lines[:-1])
    assert statuses == expected, done.stdout
    required = sum(status != "SKIP" for status in expected.values())
    assert lines[-1] == f"READY: {required}/{required} checks passed", done.stdout


def _status_line(line: str) -> tuple[str, str]:
    """`  PASS  Tau controller       1/1 ready` -> ("Tau controller", "PASS"): names may hold
    spaces, so the name is the report's 20-character name column."""
    status, rest = line.strip().split(maxsplit=1)
    return rest[:20].rstrip(), status


def installation_suite_runs_in_the_controller(tau: Tau, scope: list[str], site: Path) -> None:
    """An operator's suite runs once inside the installed controller's container: its passing
    checks are PASS lines, its failing one a FAIL line with the check's message that makes the
    report NOT READY (exit 1, the message in the one error line)."""
    site.mkdir()
    (site / "test_site.py").write_text(SITE_INSTALLATION_SUITE)
    done = tau(
        "cluster",
        "validate",
        "installation",
        *scope,
        "--timeout",
        "2m",
        "--suite",
        str(site),
        "-o",
        "json",
    )
    assert done.returncode == 1, done.stderr + done.stdout
    report = json.loads(done.stdout)
    checks = {c["name"]: (c["status"], c["detail"]) for c in report["checks"]}
    assert checks["Tau controller"][0] == "PASS", checks
    assert [name for name in checks if name.startswith("test_site.py")] == list(SITE_CHECKS)
    assert checks[SITE_CHECKS[0]] == ("PASS", "")
    assert checks[SITE_CHECKS[1]] == ("PASS", "")
    assert checks[SITE_CHECKS[2]] == ("FAIL", "site proxy not configured")
    assert not report["ready"] and report["passed"] == report["required"] - 1
    (line,) = done.stderr.strip().splitlines()[-1:]
    assert f"{SITE_CHECKS[2]}: site proxy not configured" in line


def probe_pods(cluster: LocalCluster) -> list[dict]:
    return items(
        cluster, "pods", "-n", "default", "-l", "app.kubernetes.io/managed-by=tau-validate"
    )


def real_node_probe(tau: Tau, cluster: LocalCluster, image: str) -> dict[str, Any]:
    """The shipped node suite really runs on the real CPU node (kubectl exec into a
    privileged pod of `image`, chroot into the node): node basics pass, every GPU check says
    "no GPU", the node is HEALTHY and the probe pod is gone afterwards."""
    done = tau(
        "cluster",
        "validate",
        "nodes",
        "--include-cpu",
        "--selector",
        ",".join(f"{k}={v}" for k, v in fx.REAL_NODE_SELECTOR.items()),
        "--image",
        image,
        "-o",
        "json",
    )
    assert done.returncode == 0, done.stderr
    assert f"probing {fx.REAL_NODE} ..." in done.stderr
    report = json.loads(done.stdout)
    (node,) = report["nodes"]
    assert (node["node"], node["source"], node["allocatable"]) == (fx.REAL_NODE, "none", 0)
    assert node["podError"] == "", node
    checks = {c["check"]: (c["outcome"], c["message"]) for c in node["checks"]}
    gpu = {name: result for name, result in checks.items() if name.startswith("test_gpu.py")}
    assert gpu and set(gpu.values()) == {("skipped", "no GPU")}, checks
    for check in NODE_BASICS:
        assert checks[check] == ("passed", ""), checks
    # Values the checks recorded on the node itself, not in the probe container.
    assert node["probe"]["nvidia_smi_rc"] == "127", node["probe"]
    assert 0 <= int(node["probe"]["rootfs_used_percent"]) < 90, node["probe"]
    assert (node["status"], node["reasons"]) == ("HEALTHY", []), node
    assert (report["healthy"], report["total"]) == (1, 1)
    assert probe_pods(cluster) == []
    return node

"""`tau cluster` on the local control plane: install → validate → topology → uninstall.

Kueue and KubeRay already run there as processes, so the chart is installed with both
disabled (they would not be vendored offline anyway). The chart's controller Deployment is
faked by KWOK; the real `python -m tau.controller` runs beside the test as the chart's
ServiceAccount, authorized only by the RBAC this very release installed, and turns the
TauCluster NodesReady. Names are unique per run so the suite's baseline queue stays untouched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from controller_harness import Controller, get, unique, wait_for

from hack.localcluster import fixtures as fx

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "charts" / "taugrid"
EXPECTED_STATUSES = {
    "Kubernetes": "PASS",
    "Kueue": "SKIP",
    "KubeRay": "SKIP",
    "Portal": "PASS",
    "Tau controller": "PASS",
    "TauCluster": "PASS",
    "Baseline queue": "PASS",
    "Quota guard": "PASS",
}
# Cluster-scoped objects the release owns; other suites (or an earlier, interrupted release on a
# reused cluster) may have left them behind, and Helm refuses to adopt them.
RELEASE_CLUSTER_OBJECTS = (
    ("clusterroles", "tau-researcher-v1"),
    ("clusterroles", "tau-clusterqueue-reader-v1"),
    ("clusterroles", "tau-core-controller"),
    ("clusterrolebindings", "tau-core-controller"),
    ("clusterroles", "gpu-monitoring"),
    ("clusterrolebindings", "gpu-monitoring"),
    ("validatingadmissionpolicies", "tau-quota-approval-guard"),
    ("validatingadmissionpolicybindings", "tau-quota-approval-guard"),
    ("clusters.tau.azure.com", "cluster"),
)


class Release:
    def __init__(self, cluster, tmp: Path) -> None:
        self.cluster = cluster
        self.name = unique("tau-e2e")
        self.namespace = unique("tau-e2e-sys")
        self.queue = unique("tau-e2e-q")
        self.cpu_flavor = f"{self.queue}-cpu"
        self.gpu_flavor = f"{self.queue}-h200"
        self.topology = f"{self.queue}-topo"
        self.values = tmp / "values.yaml"
        self.values.write_text(
            yaml.safe_dump(
                {
                    "components": {
                        "kueue": {"enabled": False},
                        "kuberayOperator": {"enabled": False},
                    },
                    "baselineQueue": {
                        "name": self.queue,
                        "flavor": {"name": self.cpu_flavor},
                        "topology": {"name": self.topology},
                        # The local cluster's baseline already defines taugrid-default/-priority.
                        "priorityClasses": {"enabled": False},
                        "gpu": {
                            "flavors": [
                                {
                                    "name": self.gpu_flavor,
                                    "nodeLabels": {fx.GPU_CLASS_LABEL: fx.GPU_CLASS_H200},
                                    "nodeTaints": [fx.GPU_TAINT],
                                    "resources": [{"name": fx.GPU_RESOURCE, "nominalQuota": "16"}],
                                }
                            ]
                        },
                    },
                }
            )
        )

    def tau(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tau", "cluster", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
            env=self.env(),
        )

    def env(self) -> dict[str, str]:
        path = os.pathsep.join(
            [str(REPO / ".venv" / "bin"), str(self.cluster.bin_dir), os.environ["PATH"]]
        )
        return {**os.environ, "KUBECONFIG": str(self.cluster.kubeconfig), "PATH": path}

    def scope(self) -> list[str]:
        return ["--release", self.name, "--namespace", self.namespace]


def _clear_leftovers(cluster) -> None:
    for resource, name in RELEASE_CLUSTER_OBJECTS:
        cluster.kubectl("delete", resource, name, "--ignore-not-found", "--wait=true", check=False)


def _still_installing(install: subprocess.Popen[str]) -> bool:
    if install.poll() is not None:
        out, err = install.communicate()
        raise AssertionError(f"tau cluster install exited {install.returncode}:\n{err}\n{out}")
    return True


@pytest.fixture(scope="module")
def release(local_cluster, tmp_path_factory) -> Iterator[Release]:
    """The chart installed by `tau cluster install`, with the real controller running."""
    _clear_leftovers(local_cluster)
    rel = Release(local_cluster, tmp_path_factory.mktemp("cluster-release"))
    args = [
        "install",
        "--chart",
        str(CHART),
        *rel.scope(),
        "-f",
        str(rel.values),
        "--timeout",
        "4m",
    ]
    install = subprocess.Popen(
        [sys.executable, "-m", "tau", "cluster", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=rel.env(),
    )
    controller = Controller(local_cluster, rel.namespace, tmp_path_factory.mktemp("controller"))
    try:
        # The controller can only start once the release's RBAC exists: it is authorized by it.
        # Helm applies RBAC before Deployments, so the Deployment marks the RBAC as applied.
        wait_for(
            "the release's controller Deployment",
            lambda: (
                _still_installing(install)
                and get(local_cluster, "deployment", "tau-core-controller", "-n", rel.namespace)
            ),
            timeout=240,
            interval=1,
        )
        controller.start()
        rel.install_output = install.communicate(timeout=300)
        rel.install_code = install.returncode
        yield rel
    finally:
        if install.poll() is None:
            install.kill()
        controller.stop()
        rel.tau("uninstall", "--chart", str(CHART), *rel.scope(), "--yes", "--no-drain-queue")
        local_cluster.kubectl("delete", "namespace", rel.namespace, "--wait=false", check=False)


def test_install_runs_both_passes_and_ends_ready(release):
    stdout, stderr = release.install_output
    assert release.install_code == 0, stderr + stdout
    assert "bootstrap pass" in stderr and "main pass" in stderr
    for name, status in EXPECTED_STATUSES.items():
        assert any(line.split()[:1] == [status] and name in line for line in stdout.splitlines()), (
            stdout
        )
    assert "READY: 6/6 checks passed" in stdout
    assert "Next: tau workspace create" in stdout


def test_validate_installation_reports_the_pass_and_skip_set(release):
    done = release.tau(
        "validate", "installation", *release.scope(), "--timeout", "30s", "-o", "json"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert {c["name"]: c["status"] for c in report["checks"]} == EXPECTED_STATUSES
    assert report["ready"] and (report["passed"], report["required"]) == (6, 6)


def test_the_installed_quota_guard_denies_researcher_decisions(release, local_cluster, tmp_path):
    namespace = release.namespace
    local_cluster.apply(
        [
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": "quota-requester", "namespace": namespace},
                "rules": [
                    {
                        "apiGroups": ["tau.azure.com"],
                        "resources": ["quotarequests"],
                        "verbs": ["create", "get", "update", "patch"],
                    }
                ],
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": "quota-requester", "namespace": namespace},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": "quota-requester",
                },
                "subjects": [
                    {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "researcher"}
                ],
            },
        ]
    )
    researcher = local_cluster.mint_kubeconfig(
        "researcher", path=tmp_path / "researcher.kubeconfig"
    )

    def request(name: str, annotations: dict[str, str]) -> subprocess.CompletedProcess[str]:
        obj = {
            "apiVersion": "tau.azure.com/v1alpha1",
            "kind": "TauQuotaRequest",
            "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
            "spec": {
                "workspace": "w",
                "resource": fx.GPU_RESOURCE,
                "requested": 8,
                "reason": "eval",
            },
        }
        return local_cluster.kubectl(
            "create", "-f", "-", input=json.dumps(obj), kubeconfig=researcher, check=False
        )

    wait_for("the researcher's RBAC", lambda: request("plain", {}).returncode == 0, timeout=30)
    denied = request("self-approved", {"tau.azure.com/approved": "true"})
    assert denied.returncode != 0
    assert "decision annotations" in denied.stderr and "platform-owned" in denied.stderr
    approved = local_cluster.kubectl(
        "annotate",
        "-n",
        namespace,
        "quotarequests.tau.azure.com",
        "plain",
        "tau.azure.com/approved=true",
    )
    assert approved.returncode == 0  # the admin is in system:masters


def test_validate_topology_passes_for_the_release_queue(release):
    done = release.tau("validate", "topology", "--cluster-queue", release.queue)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"ok flavor {release.gpu_flavor}: 2 GPU node(s) match" in done.stdout
    assert (
        f"ok flavor {release.gpu_flavor} gpu-allocatable: 2/2 nodes expose nvidia.com/gpu"
        in done.stdout
    )
    assert "0 errors" in done.stdout.splitlines()[-1]


def test_validate_topology_fails_when_a_flavor_matches_no_node(release, local_cluster):
    queue, flavor = unique("tau-e2e-orphan"), unique("tau-e2e-nowhere")
    local_cluster.apply(
        [
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ResourceFlavor",
                "metadata": {"name": flavor},
                "spec": {
                    "nodeLabels": {fx.GPU_CLASS_LABEL: "gb300-288gb"},
                    "nodeTaints": [fx.GPU_TAINT],
                },
            },
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": queue},
                "spec": {
                    "resourceGroups": [
                        {
                            "coveredResources": [fx.GPU_RESOURCE],
                            "flavors": [
                                {
                                    "name": flavor,
                                    "resources": [{"name": fx.GPU_RESOURCE, "nominalQuota": "4"}],
                                }
                            ],
                        }
                    ]
                },
            },
        ]
    )
    try:
        done = release.tau("validate", "topology", "--cluster-queue", queue)
        assert done.returncode == 1
        assert f"error flavor {flavor}: 0 nodes match" in done.stdout
        assert done.stdout.splitlines()[-1] == "summary: 0 passed, 0 warnings, 1 errors"
        assert (
            done.stderr.strip()
            .splitlines()[-1]
            .startswith("error: topology validation found 1 error")
        )
    finally:
        local_cluster.kubectl("delete", "clusterqueue", queue, "--wait=false", check=False)
        local_cluster.kubectl("delete", "resourceflavor", flavor, "--wait=false", check=False)


def test_profiles_export_refuses_the_unready_catalog(release, tmp_path):
    # The chart's catalog targets LocalQueue jobqueue in taugrid-default, which does not exist
    # here: the controller reports the profiles not ready and the export fails closed.
    target = tmp_path / "profiles.snapshot.yaml"
    done = release.tau("profiles", "export", "--output", str(target))
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].startswith("error: ")
    assert not target.exists()


def test_uninstall_drains_the_queue_then_keeps_crds_and_workspaces(release, local_cluster):
    workspace = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauWorkspace",
        "metadata": {"name": "kept", "namespace": release.namespace},
        "spec": {"authorization": {"mode": "cluster-wide"}},
    }
    local_cluster.kubectl("create", "-f", "-", input=json.dumps(workspace))
    started = time.monotonic()
    done = release.tau(
        "uninstall", "--chart", str(CHART), *release.scope(), "--yes", "--timeout", "2m"
    )
    assert done.returncode == 0, done.stderr
    assert (
        "phase 1: draining queue policy" in done.stderr and "phase 2: helm uninstall" in done.stderr
    )
    assert "note:" not in done.stderr  # the drain was verified: nothing may strand
    assert "CRDs, custom resources" in done.stdout
    for kind, name in (
        ("clusterqueue", release.queue),
        ("resourceflavor", release.gpu_flavor),
        ("topology", release.topology),
        ("deployment", "tau-core-controller"),
    ):
        assert get(local_cluster, kind, name, "-n", release.namespace) is None, (
            f"{kind}/{name} left behind"
        )
    for crd in ("clusters", "workspaces", "quotarequests"):
        assert get(local_cluster, "crd", f"{crd}.tau.azure.com") is not None
    assert (
        get(local_cluster, "workspaces.tau.azure.com", "kept", "-n", release.namespace) is not None
    )
    assert time.monotonic() - started < 150

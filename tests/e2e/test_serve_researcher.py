"""`tau serve` as the researcher identity in a TauWorkspace namespace, with only the chart's
`tau-researcher-v1` role the controller binds: every verb the serve docs teach is allowed,
and the namespace's LocalQueue is found although researchers cannot read Namespaces.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_harness import wait_for
from lifecycle_env import CONTEXT, CPU_PROFILE, Workspace, workspace_setup
from tau_cli import TAU

from hack.localcluster import LocalCluster


@pytest.fixture(scope="module")
def workspace(local_cluster: LocalCluster, tmp_path_factory) -> Iterator[Workspace]:
    yield from workspace_setup(local_cluster, tmp_path_factory.mktemp("serve-researcher"))


def serve(ws: Workspace, verb: str, name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [TAU, "serve", verb, name, "-n", ws.namespace, "--context", CONTEXT, *args],
        cwd=ws.repo,
        env=ws.env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def web_args(*extra: str) -> list[str]:
    return [
        "--kind",
        "deployment",
        "--profile",
        CPU_PROFILE,
        "--image",
        "busybox:1.36.1",
        "--deployment-port",
        "8080",
        "--service-port",
        "80",
        *extra,
    ]


def test_the_researcher_role_cannot_read_namespaces(workspace):
    # The premise of the LocalQueue lookup below: the label on the Namespace is out of sight.
    read = workspace.kubectl(
        "get", "namespace", workspace.namespace,
        kubeconfig=Path(workspace.env["KUBECONFIG"]), check=False,
    )  # fmt: skip
    assert read.returncode != 0 and "Forbidden" in read.stderr, read.stderr


def test_a_researcher_deploys_scales_autoscales_reads_and_deletes_an_endpoint(workspace):
    deployed = serve(workspace, "deploy", "web", *web_args())
    assert deployed.returncode == 0, deployed.stderr
    assert deployed.stdout.startswith("deployed service web (kind=deployment")
    assert workspace.get("deployment", "web", "-n", workspace.namespace) is not None

    scaled = serve(workspace, "scale", "web", "--kind", "deployment", "--replicas", "2")
    assert scaled.returncode == 0, scaled.stderr
    assert scaled.stdout == f"scaled deployment/web to 2 replicas (ns={workspace.namespace})\n"

    autoscaled = serve(
        workspace, "deploy", "web", *web_args("--max-replicas", "3", "--cpu", "100m")
    )
    assert autoscaled.returncode == 0, autoscaled.stderr
    hpa = workspace.get("hpa", "web", "-n", workspace.namespace)
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 3)

    status = serve(workspace, "status", "web", "--kind", "deployment", "-o", "json")
    assert status.returncode == 0, status.stderr
    record = json.loads(status.stdout)
    assert record["endpoint"] == f"http://web.{workspace.namespace}.svc:80"
    assert record["autoscaling"] is not None

    deleted = serve(workspace, "delete", "web", "--kind", "deployment")
    assert deleted.returncode == 0, deleted.stderr
    assert f"deleted deployment/web (ns={workspace.namespace})" in deleted.stdout.splitlines()
    for kind in ("deployment", "service", "hpa"):
        assert workspace.get(kind, "web", "-n", workspace.namespace) is None, kind


def test_a_researchers_endpoint_gets_pods_in_the_restricted_workspace_namespace(workspace):
    """A Deployment is admitted whatever its pods; the ReplicaSet creating them proves the
    namespace's Pod Security (restricted, the default) admits what tau serve rendered."""
    labels = workspace.get("namespace", workspace.namespace)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    deployed = serve(workspace, "deploy", "admitted", *web_args())
    assert deployed.returncode == 0, deployed.stderr
    assert "PodSecurity" not in deployed.stderr, deployed.stderr
    try:
        pods = wait_for(
            "the endpoint's pod",
            lambda: (
                workspace.get("pods", "-n", workspace.namespace, "-l", "app=admitted") or {}
            ).get("items"),
            timeout=60,
        )
        assert pods[0]["spec"]["securityContext"]["runAsNonRoot"] is True
    finally:
        serve(workspace, "delete", "admitted", "--kind", "deployment")


def test_a_researcher_server_dry_runs_a_rayservice(workspace):
    result = serve(
        workspace,
        "deploy",
        "policy",
        "--profile",
        CPU_PROFILE,
        "--image",
        "rayproject/ray:2.56.0-py311",
        "--replicas",
        "1",
        "--dry-run=server",
    )
    assert result.returncode == 0, result.stderr
    assert "rayservice.ray.io/policy applied (server dry run)" in result.stdout
    assert workspace.get("rayservices.ray.io", "policy", "-n", workspace.namespace) is None

"""The whole handoff: the tau-core controller makes a TauWorkspace Ready, the chart's
researcher role is bound to a real identity, and a scaffolded repository connects with it.

This proves the verbs `tau workspace connection` checks (SelfSubjectAccessReviews) are
exactly what the chart's `tau-researcher-v1` ClusterRole and the controller's reader Role
grant — no test-made RBAC, no test-written status.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from controller_harness import Controller, install, unique, wait_for
from tau_cli import TAU, run_tau

from hack.localcluster import LocalCluster


@pytest.fixture
def controller(local_cluster: LocalCluster, tmp_path: Path) -> Iterator[tuple[Controller, str]]:
    system_namespace = unique("tau-sys")
    install(local_cluster, system_namespace)
    (tmp_path / "controller").mkdir()
    process = Controller(local_cluster, system_namespace, tmp_path / "controller")
    process.start()
    yield process, system_namespace
    process.stop()


def test_a_controller_ready_workspace_connects_with_the_chart_researcher_role(
    local_cluster: LocalCluster, controller: tuple[Controller, str], tmp_path: Path
) -> None:
    _, system_namespace = controller
    name, user = unique("research"), unique("alice") + "@example.com"
    workspace = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauWorkspace",
        "metadata": {"name": name, "namespace": system_namespace},
        "spec": {
            "principalRef": {"provider": "entra", "name": "ml-researchers"},
            "kubernetesSubject": {"kind": "User", "name": user},
            "role": "tau-researcher-v1",
            "target": {"createNamespace": True},
            "queue": "jobqueue",
        },
    }
    local_cluster.kubectl("apply", "-f", "-", input=json.dumps(workspace))

    def phase() -> str:
        obj = local_cluster.get_json("workspaces.tau.azure.com", name, "-n", system_namespace)
        return (obj.get("status") or {}).get("phase") == "Ready"

    wait_for("TauWorkspace Ready (set by the controller)", phase, timeout=90)

    minted = local_cluster.mint_kubeconfig(user, path=tmp_path / "alice.kubeconfig")
    config = yaml.safe_load(minted.read_text())
    config["contexts"][0]["name"] = config["current-context"] = "research-cluster"
    minted.write_text(yaml.safe_dump(config))
    scaffolded = subprocess.run(
        [
            TAU,
            "workspace",
            "init-repo",
            "repo",
            "--image",
            "example.azurecr.io/r:1",
            "--workspace",
            name,
            "--kube-context",
            "research-cluster",
            "--system-namespace",
            system_namespace,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert scaffolded.returncode == 0, scaffolded.stderr
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    env = {**os.environ, "KUBECONFIG": str(minted), "TAU_CONFIG_DIR": str(tmp_path / "tau")}

    result = run_tau("workspace", "connection", cwd=tmp_path / "repo", env=env, answer="y")
    assert result.returncode == 0, result.stderr
    assert "Connected." in result.stdout
    assert f"Namespace:     {name}" in result.stdout
    assert "Queue:         jobqueue" in result.stdout

    local_cluster.kubectl(
        "delete", "workspaces.tau.azure.com", name, "-n", system_namespace, "--wait=false"
    )

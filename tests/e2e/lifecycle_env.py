"""One researcher workspace for the lifecycle tests: controller-Ready TauWorkspace, ready
TauCluster profiles, a scaffolded repository connected through the chart's researcher role.

The researcher holds only what the controller binds from the chart (`tau-researcher-v1` in
the workspace namespace, `tau-clusterqueue-reader-v1`, the workspace reader Role): no grant
made by the tests, so every verb the tests run as the researcher is one the chart allows.

Module-scoped (see `lifecycle_workspace` in each test module) so the controller, the
workspace and the connection review happen once per module.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from controller_harness import Controller, get, install, unique, wait_for
from tau_cli import TAU, run_tau

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

CONTEXT = "research-cluster"
IMAGE = "example.azurecr.io/research/train:1.0"
CPU_PROFILE = "e2e.cpu"
H200_PROFILE = "e2e.h200.8x"
DDP_PROFILE = "e2e.h200.2x8"


@dataclass
class Workspace:
    cluster: LocalCluster
    name: str
    namespace: str
    system_namespace: str
    user: str
    repo: Path
    env: dict[str, str]
    controller: Controller

    def tau(self, *args: str, timeout: float = 180, cwd: Path | None = None):
        return run_tau(*args, cwd=cwd or self.repo, env=self.env, timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """A running command that Ctrl-C (SIGINT) reaches as it reaches a terminal's
        foreground job, even when the suite itself was started in the background, where
        the shell has SIGINT ignored and every child would inherit that."""
        return subprocess.Popen(
            [TAU, *args],
            cwd=self.repo,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )

    def target(self, name: str, body: dict[str, Any]) -> Path:
        """Write tau/<name>.yaml (a checked-in target) and return its path."""
        path = self.repo / "tau" / f"{name}.yaml"
        path.write_text(yaml.safe_dump(body, sort_keys=False))
        return path

    def get(self, *args: str) -> dict[str, Any] | None:
        return get(self.cluster, *args)

    def kubectl(self, *args: str, **kwargs):
        return self.cluster.kubectl(*args, **kwargs)

    def document(self, model: type, *args: str) -> dict[str, Any]:
        """`tau ARGS -o json` and `-o yaml`: one document (`age` aside, computed at print
        time), valid against its model's JSON Schema. Returns the JSON document."""
        import jsonschema

        as_json = self.tau(*args, "-o", "json")
        as_yaml = self.tau(*args, "-o", "yaml")
        assert (as_json.returncode, as_yaml.returncode) == (0, 0), as_json.stderr + as_yaml.stderr
        document = json.loads(as_json.stdout)
        assert _timeless(yaml.safe_load(as_yaml.stdout)) == _timeless(json.loads(as_json.stdout))
        jsonschema.validate(document, model.model_json_schema(mode="serialization"))
        return document


def _timeless(document: dict[str, Any]) -> dict[str, Any]:
    for run in document.get("runs", []):
        run.pop("age")
    return document


def job_target(name: str, *, profile: str = CPU_PROFILE, gpus: int = 0, **extra: Any) -> dict:
    body: dict[str, Any] = {
        "name": name,
        "engine": "job",
        "entrypoint": "../src/repo/train.py",
        "runtime": {"image": IMAGE},
        "compute": {"gpus": gpus, "cpu_request": "1", "memory_request": "2Gi"},
        "policy": {"profile": profile},
    }
    body.update(extra)
    return body


def tau_cluster(namespace: str) -> dict[str, Any]:
    def profile(name: str, gpus: int, workers: int = 1) -> dict[str, Any]:
        return {
            "name": name,
            "applicability": {"namespaces": [namespace]},
            "gpusPerWorker": gpus,
            "workerCount": workers,
            "mode": "fixed",
            "placement": "independent" if workers == 1 else "multi-node-nccl",
            "defaultLocalQueue": fx.CLUSTER_QUEUE,
            "priorities": {
                "workloadPriorityClassName": fx.PRIORITY_DEFAULT,
                "podPriorityClassName": fx.PRIORITY_DEFAULT,
            },
        }

    return {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauCluster",
        "metadata": {"name": "cluster"},
        "spec": {
            "managementMode": "Observe",
            "workloadProfiles": [
                profile(CPU_PROFILE, 0),
                profile(H200_PROFILE, 8),
                profile(DDP_PROFILE, 8, workers=2),
            ],
        },
    }


def results_volume(ws: Workspace, tmp_path: Path, claim: str = "results") -> str:
    """A bound PVC for run results (the local plane has no provisioner)."""
    hostpath_volume(ws, claim, tmp_path)
    return claim


def hostpath_volume(ws: Workspace, claim: str, root: Path) -> None:
    """PVC ``claim`` in the workspace namespace, pre-bound to a hostPath volume at ``root``."""
    ws.cluster.apply(
        [
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": f"{claim}-{ws.namespace}"},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteMany"],
                    "storageClassName": "",
                    "hostPath": {"path": str(root)},
                    "claimRef": {"namespace": ws.namespace, "name": claim},
                },
            },
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "namespace": ws.namespace},
                "spec": {
                    "accessModes": ["ReadWriteMany"],
                    "storageClassName": "",
                    "volumeName": f"{claim}-{ws.namespace}",
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
        ]
    )


def _restore(cluster: LocalCluster, previous: dict[str, Any] | None) -> None:
    cluster.kubectl("delete", "clusters.tau.azure.com", "cluster", check=False)
    if previous:
        meta = previous["metadata"]
        previous["metadata"] = {
            "name": "cluster",
            "labels": meta.get("labels", {}),
            "annotations": meta.get("annotations", {}),
        }
        previous.pop("status", None)
        cluster.kubectl("apply", "-f", "-", input=json.dumps(previous))


def workspace_setup(cluster: LocalCluster, tmp: Path) -> Iterator[Workspace]:
    system = unique("tau-sys")
    install(cluster, system)
    (tmp / "controller").mkdir()
    controller = Controller(cluster, system, tmp / "controller")
    controller.start()
    previous = get(cluster, "clusters.tau.azure.com", "cluster")
    name, user = unique("research"), unique("alice") + "@example.com"
    workspace = {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauWorkspace",
        "metadata": {"name": name, "namespace": system},
        "spec": {
            "principalRef": {"provider": "entra", "name": "ml-researchers"},
            "kubernetesSubject": {"kind": "User", "name": user},
            "role": "tau-researcher-v1",
            "target": {"createNamespace": True},
            "queue": fx.CLUSTER_QUEUE,
        },
    }
    try:
        cluster.kubectl("apply", "-f", "-", input=json.dumps(workspace))

        def ready() -> dict[str, Any] | None:
            obj = get(cluster, "workspaces.tau.azure.com", name, "-n", system)
            status = (obj or {}).get("status") or {}
            return obj if status.get("phase") == "Ready" else None

        obj = wait_for("TauWorkspace Ready", ready, timeout=120)
        namespace = obj["status"]["target"]["resolvedNamespace"]
        cluster.kubectl("apply", "-f", "-", input=json.dumps(tau_cluster(namespace)))

        def profiles_ready() -> bool:
            tc = get(cluster, "clusters.tau.azure.com", "cluster") or {}
            st = tc.get("status") or {}
            wp = st.get("workloadProfiles") or {}
            generation = tc.get("metadata", {}).get("generation")
            return wp.get("observedGeneration") == generation and any(
                c["type"] == "WorkloadProfilesReady" and c["status"] == "True"
                for c in st.get("conditions") or []
            )

        wait_for("TauCluster workload profiles Ready", profiles_ready, timeout=120)

        kubeconfig = cluster.mint_kubeconfig(user, path=tmp / "researcher.kubeconfig")
        config = yaml.safe_load(kubeconfig.read_text())
        config["contexts"][0]["name"] = config["current-context"] = CONTEXT
        kubeconfig.write_text(yaml.safe_dump(config))
        subprocess.run(
            [
                TAU,
                "workspace",
                "init-repo",
                "repo",
                "--image",
                IMAGE,
                "--workspace",
                name,
                "--kube-context",
                CONTEXT,
                "--system-namespace",
                system,
            ],
            cwd=tmp,
            check=True,
            capture_output=True,
        )
        repo = tmp / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        env = {
            **os.environ,
            "KUBECONFIG": str(kubeconfig),
            "TAU_CONFIG_DIR": str(tmp / "tau-config"),
            "COLUMNS": "200",
        }
        env.pop("TAU_CONTEXT", None)
        connected = run_tau("workspace", "connection", cwd=repo, env=env, answer="y")
        assert connected.returncode == 0, connected.stderr
        yield Workspace(cluster, name, namespace, system, user, repo, env, controller)
    finally:
        cluster.kubectl(
            "delete", "workspaces.tau.azure.com", name, "-n", system, "--wait=false", check=False
        )
        _restore(cluster, previous)
        controller.stop()

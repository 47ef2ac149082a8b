"""The serving platform for `tau serve` end-to-end tests: profiles, onboarded namespaces.

The real tau-core controller resolves a TauCluster with two serving profiles for two
namespaces, both holding LocalQueue `jobqueue`; only `onboarded` carries the
`kueue.x-k8s.io/default-local-queue` label a TauWorkspace sets, so `scratch` is a namespace
the platform never onboarded for serving. Serving uses the admin kubeconfig with an explicit
--context, as a platform handoff would give it. Module-scoped (see `platform` in each module).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from controller_harness import Controller, get, install, unique, wait_for
from tau_cli import run_tau

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

RAY_IMAGE = "rayproject/ray:2.40.0-py312-gpu"
GPU_PROFILE = "e2e.serve.h200"
CPU_PROFILE = "e2e.serve.cpu"


@dataclass
class Platform:
    cluster: LocalCluster
    onboarded: str
    scratch: str
    context: str
    env: dict[str, str]
    cwd: Path

    def tau(self, *args: str, timeout: float = 180):
        return run_tau(*args, cwd=self.cwd, env=self.env, timeout=timeout)

    def serve(self, verb: str, name: str, *args: str, namespace: str = ""):
        return self.tau(
            "serve", verb, name, "-n", namespace or self.onboarded, "--context", self.context, *args
        )

    def get(self, *args: str) -> dict[str, Any] | None:
        return get(self.cluster, *args)


def serving_cluster(onboarded: str, scratch: str) -> dict[str, Any]:
    def profile(name: str, gpus: int) -> dict[str, Any]:
        return {
            "name": name,
            "applicability": {"namespaces": sorted([onboarded, scratch])},
            "gpusPerWorker": gpus,
            "workerCount": 1,
            "mode": "fixed",
            "placement": "independent",
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
            "workloadProfiles": [profile(CPU_PROFILE, 0), profile(GPU_PROFILE, 1)],
        },
    }


def namespace_with_queue(name: str, *, default_label: bool) -> list[dict[str, Any]]:
    labels = {"kueue.x-k8s.io/default-local-queue": fx.CLUSTER_QUEUE} if default_label else {}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}},
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "LocalQueue",
            "metadata": {"name": fx.CLUSTER_QUEUE, "namespace": name},
            "spec": {"clusterQueue": fx.CLUSTER_QUEUE},
        },
    ]


def platform_setup(local_cluster: LocalCluster, tmp: Path) -> Iterator[Platform]:
    system = unique("tau-sys")
    install(local_cluster, system)
    (tmp / "controller").mkdir()
    controller = Controller(local_cluster, system, tmp / "controller")
    controller.start()
    previous = get(local_cluster, "clusters.tau.azure.com", "cluster")
    onboarded, scratch = unique("serve"), unique("scratch")
    try:
        local_cluster.apply(namespace_with_queue(onboarded, default_label=True))
        local_cluster.apply(namespace_with_queue(scratch, default_label=False))
        local_cluster.kubectl("delete", "clusters.tau.azure.com", "cluster", check=False)
        local_cluster.kubectl(
            "apply", "-f", "-", input=json.dumps(serving_cluster(onboarded, scratch))
        )

        def ready() -> bool:
            tc = get(local_cluster, "clusters.tau.azure.com", "cluster") or {}
            status = tc.get("status") or {}
            profiles = status.get("workloadProfiles") or {}
            return profiles.get("observedGeneration") == tc["metadata"]["generation"] and any(
                c["type"] == "WorkloadProfilesReady" and c["status"] == "True"
                for c in status.get("conditions") or []
            )

        wait_for("serving profiles Ready", ready, timeout=120)
        context = yaml.safe_load(local_cluster.kubeconfig.read_text())["current-context"]
        env = {
            **os.environ,
            "KUBECONFIG": str(local_cluster.kubeconfig),
            "TAU_CONFIG_DIR": str(tmp / "tau-config"),
            "COLUMNS": "200",
        }
        env.pop("TAU_CONTEXT", None)
        yield Platform(local_cluster, onboarded, scratch, context, env, tmp)
    finally:
        for namespace in (onboarded, scratch):
            local_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
        local_cluster.kubectl("delete", "clusters.tau.azure.com", "cluster", check=False)
        if previous:
            previous["metadata"] = {"name": "cluster"}
            previous.pop("status", None)
            local_cluster.kubectl("apply", "-f", "-", input=json.dumps(previous))
        controller.stop()

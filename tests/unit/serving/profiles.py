"""Serving profiles whose TauCluster status the real controller code computed.

`snapshot(path)` writes them as a TauWorkloadProfileSnapshot (what `tau cluster profiles
export` produces), so CLI tests exercise the same fail-closed loading as an offline user.
"""

from __future__ import annotations

from pathlib import Path

from controller.world import profile
from profiles.status import tau_cluster

from tau.profiles.select import ProfileSet, Selection, accept_status
from tau.profiles.snapshot import snapshot_from, write_snapshot

NAMESPACE = "team-a"
SCOPE = {"namespaces": [NAMESPACE]}
GPU = "model-serve"
CPU = "cpu-serve"
MULTI = "model-serve-2x8"
ELASTIC = "elastic-serve-2x8"
WIDE = "cpu-serve-2x"  # two CPU-only workers: not a multi-node serving shape


def profile_set() -> ProfileSet:
    return accept_status(
        tau_cluster(
            profile(name=GPU, applicability=SCOPE, gpusPerWorker=1),
            profile(name=CPU, applicability=SCOPE, gpusPerWorker=0),
            profile(
                name=MULTI,
                applicability=SCOPE,
                gpusPerWorker=8,
                workerCount=2,
                placement="multi-node-nccl",
            ),
            profile(
                name=ELASTIC,
                applicability=SCOPE,
                gpusPerWorker=8,
                workerCount=2,
                mode="elastic",
                placement="multi-node-nccl",
            ),
            profile(
                name=WIDE,
                applicability=SCOPE,
                gpusPerWorker=0,
                workerCount=2,
                placement="multi-node-nccl",
            ),
        )
    )


def selection(name: str) -> Selection:
    return profile_set().select(name, namespace=NAMESPACE)


def snapshot(path: Path) -> Path:
    write_snapshot(snapshot_from(profile_set()), path)
    return path

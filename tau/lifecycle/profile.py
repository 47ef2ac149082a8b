"""`--run-profile`: current GPU telemetry from dcgm-exporter, read through the API server.

At most two discovery requests (the official dcgm-exporter label and TauGrid's GPU
monitoring label) and one metrics request per distinct workload node. Anything missing —
exporter, permissions, samples — is reported as unavailable, never as a false zero.
"""

from __future__ import annotations

from typing import Any

from tau import keys
from tau.jsontypes import JSONObject
from tau.kube import KubeClient, KubeError
from tau.kube.resources import PODS
from tau.kube.stream import get_text
from tau.lifecycle import objects as o
from tau.lifecycle.snapshot import Snapshot

EXPORTER_SELECTORS = ("app.kubernetes.io/name=dcgm-exporter", f"{keys.GPU_MONITORING}=true")
METRICS_PORT = 9400


def _unavailable(reason: str) -> JSONObject:
    return {
        "available": False,
        "reason": reason,
        "rows": [
            {"name": "gpu_runtime", "value": f"unavailable ({reason})"},
            {
                "name": "cuda_compute_process",
                "value": "unavailable (dcgm-exporter exposes no compute PIDs or CUDA contexts)",
            },
        ],
    }


def _parse(text: str, namespace: str, pods: set[str]) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"DCGM_FI_DEV_GPU_UTIL": [], "DCGM_FI_DEV_FB_USED": []}
    for line in text.splitlines():
        metric = line.split("{", 1)[0]
        if metric not in samples or "{" not in line:
            continue
        labels = line.split("{", 1)[1].rsplit("}", 1)[0]
        if f'namespace="{namespace}"' not in labels:
            continue
        if not any(f'pod="{pod}"' in labels for pod in pods):
            continue
        try:
            samples[metric].append(float(line.rsplit(" ", 1)[1]))
        except ValueError:
            continue
    return samples


def run_profile(kube: KubeClient, snap: Snapshot) -> JSONObject:
    active = [p for p in snap.pods if o.pod_is_active(p) and o.node_name(p)]
    if not active:
        return _unavailable("no running workload pods")
    exporters: list[dict[str, Any]] = []
    for selector in EXPORTER_SELECTORS:
        try:
            exporters += kube.list(PODS, "", label_selector=selector)
        except KubeError as error:
            return _unavailable(f"cannot list exporter pods: {error.layer}")
    nodes = {o.node_name(p) for p in active}
    by_node = {o.node_name(e): e for e in exporters if o.node_name(e) in nodes}
    if not by_node:
        return _unavailable("no dcgm-exporter pod on the workload's nodes")
    util: list[float] = []
    memory: list[float] = []
    names = {o.name(p) for p in active}
    for exporter in by_node.values():
        meta = exporter["metadata"]
        path = PODS.path(meta["namespace"], f"{meta['name']}:{METRICS_PORT}", "proxy/metrics")
        try:
            text = get_text(kube, path, "read dcgm-exporter metrics")
        except KubeError as error:
            return _unavailable(f"cannot read exporter metrics: {error.layer}")
        samples = _parse(text, snap.namespace, names)
        util += samples["DCGM_FI_DEV_GPU_UTIL"]
        memory += [mib / 1024 for mib in samples["DCGM_FI_DEV_FB_USED"]]
    if not util:
        return _unavailable("no samples match this run's pods")
    activity = "active" if max(util) > 0 else ("idle now" if memory and max(memory) > 0 else "idle")
    rows = [
        {
            "name": "gpu_utilization",
            "value": f"avg {sum(util) / len(util):.0f}% max {max(util):.0f}%",
        },
        {
            "name": "gpu_memory",
            "value": f"avg {sum(memory) / len(memory):.1f} GiB max {max(memory):.1f} GiB"
            if memory
            else "unavailable",
        },
        {"name": "gpu_activity", "value": activity},
        {
            "name": "cuda_compute_process",
            "value": "unavailable (dcgm-exporter exposes no compute PIDs or CUDA contexts)",
        },
    ]
    return {"available": True, "rows": rows}

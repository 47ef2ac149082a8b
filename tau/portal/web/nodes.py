"""The Cluster Nodes board: GPU nodes, their TauCluster placement labels and GPU health.

GPU health is what the gpu-monitoring chart's node-problem-detector checks write as Node
conditions (`keys.GPU_HEALTH_CONDITIONS`, True = problem); a condition never reported is
shown as `unknown`, not as healthy.
"""

from __future__ import annotations

from typing import Any

from tau import keys
from tau.lifecycle import objects as o

PLACEMENT_PREFIXES = (keys.DOMAIN, "kueue.azure.com/")
SHOWN_LABELS = (
    keys.INSTANCE_TYPE_LABEL,
    keys.NVIDIA_GPU_PRODUCT,
    keys.AKS_AGENTPOOL,
    keys.ZONE_LABEL,
)


def gpu_capacity(node: dict[str, Any]) -> int:
    value = str(((node.get("status") or {}).get("capacity") or {}).get(keys.NVIDIA_GPU) or "0")
    return int(value) if value.isdigit() else 0


def is_gpu_node(node: dict[str, Any]) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return gpu_capacity(node) > 0 or keys.GPU_CLASS in labels or keys.NVIDIA_GPU_PRODUCT in labels


def row(node: dict[str, Any]) -> dict[str, Any]:
    meta = node.get("metadata") or {}
    labels = meta.get("labels") or {}
    st = node.get("status") or {}
    allocatable = str((st.get("allocatable") or {}).get(keys.NVIDIA_GPU) or "0")
    health = []
    for kind in keys.GPU_HEALTH_CONDITIONS:
        cond = o.condition(node, kind)
        state = "unknown" if cond is None else ("problem" if cond.get("status") == "True" else "ok")
        health.append(
            {
                "type": kind,
                "state": state,
                "reason": (cond or {}).get("reason", ""),
                "message": (cond or {}).get("message", ""),
            }
        )
    ready = o.condition(node, "Ready")
    return {
        "name": meta.get("name", ""),
        "ready": bool(ready and ready.get("status") == "True"),
        "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
        "gpu": is_gpu_node(node),
        "gpuCapacity": gpu_capacity(node),
        "gpuAllocatable": int(allocatable) if allocatable.isdigit() else 0,
        "gpuClass": labels.get(keys.GPU_CLASS, ""),
        "labels": {k: labels[k] for k in SHOWN_LABELS if k in labels},
        "placementLabels": {
            k: v for k, v in sorted(labels.items()) if k.startswith(PLACEMENT_PREFIXES)
        },
        "taints": [
            f"{t.get('key', '')}={t.get('value', '')}:{t.get('effect', '')}"
            for t in (node.get("spec") or {}).get("taints") or []
        ],
        "gpuHealth": health,
        "gpuHealthy": all(h["state"] == "ok" for h in health),
        "gpuProblems": [h["type"] for h in health if h["state"] == "problem"],
    }


def board(nodes: list[dict[str, Any]], *, gpu_only: bool = True) -> dict[str, Any]:
    rows = [row(n) for n in sorted(nodes, key=o.name) if not gpu_only or is_gpu_node(n)]
    return {
        "total": len(rows),
        "gpuNodes": sum(1 for r in rows if r["gpu"]),
        "gpus": sum(r["gpuCapacity"] for r in rows),
        "nodesWithGpuProblems": sum(1 for r in rows if r["gpuProblems"]),
        "nodes": rows,
    }

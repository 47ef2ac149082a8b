"""`tau cluster validate nodes`: GPU node discovery and the privileged node probe.

Discovery and health assessment are pure functions of Node/ResourceSlice objects and the
probe's `key=value` output, tested on recorded outputs. The probe itself is one short-lived
privileged pod per node, created through the Kubernetes API (no kubectl dependency): it reads
its result from the container's termination message, which the probe script also writes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tau import keys
from tau.errors import UsageError
from tau.kube import KubeClient, KubeError
from tau.kube.resources import NODES, PODS, RESOURCE_SLICES
from tau.runconfig.models import GPU_CLASS_ALIASES, GPU_CLASSES

GPU_CLASS_LABEL = keys.GPU_CLASS
PROBE_IMAGE = "mcr.microsoft.com/azurelinux/base/core:3.0"
PROBE_NAMESPACE = "default"
PROBE_LABEL = {keys.APP_MANAGED_BY: keys.PROBE_MANAGED_BY_VALUE}

HEALTHY, DEGRADED, UNHEALTHY, UNKNOWN = "HEALTHY", "DEGRADED", "UNHEALTHY", "UNKNOWN"

# Host commands run through nsenter into PID 1's namespaces; every line is key=value.
PROBE_SCRIPT = r"""
set +e
tdnf install -y util-linux >/dev/null 2>&1
h() { nsenter -t 1 -m -u -i -n -p -- "$@"; }
q() { h nvidia-smi --query-gpu="$1" --format=csv,noheader,nounits 2>/dev/null; }
out=/tmp/probe.out
{
  gpus=$(h nvidia-smi --list-gpus 2>/dev/null); echo "nvidia_smi_rc=$?"
  echo "gpu_count=$(printf '%s\n' "$gpus" | grep -c '^GPU ')"
  echo "driver_version=$(q driver_version | head -n1)"
  echo "mig_mode=$(q mig.mode.current | head -n1)"
  echo "mig_instances=$(h nvidia-smi -L 2>/dev/null | grep -c 'MIG ')"
  nv=$(h nvidia-smi nvlink --status 2>/dev/null); rc=$?; echo "nvlink_rc=$rc"
  if [ "$rc" -ne 0 ] || [ -z "$nv" ]; then echo "nvlink_inactive=-1"
  else echo "nvlink_inactive=$(printf '%s\n' "$nv" | grep -c '<inactive>')"; fi
  dbe=$(q ecc.errors.uncorrected.aggregate.dram | awk '$1 ~ /^[0-9]+$/ {s+=$1} END {print s+0}')
  echo "ecc_dbe=$dbe"
  total=0; active=0
  for f in /sys/class/infiniband/*/ports/*/state; do
    [ -e "$f" ] || continue; total=$((total+1)); grep -q ACTIVE "$f" && active=$((active+1))
  done
  echo "ib_total=$total"; echo "ib_active=$active"
} > "$out"
cat "$out"; cat "$out" > /dev/termination-log
"""


def node_selector(gpu_class: str, selector: str) -> tuple[str, str]:
    """--gpu-class and --selector as one label selector, plus a deprecation warning (or "")."""
    value = gpu_class.strip().lower().replace("_", "-")
    warning = ""
    if value in GPU_CLASS_ALIASES:
        warning = f"--gpu-class {value} is deprecated; use {GPU_CLASS_ALIASES[value]}"
        value = GPU_CLASS_ALIASES[value]
    if not value:
        return selector, warning
    if value == "any":
        if GPU_CLASS_LABEL in selector:
            raise UsageError(f"--gpu-class any conflicts with a --selector on {GPU_CLASS_LABEL}")
        return selector, warning
    if value not in GPU_CLASSES:
        raise UsageError(
            f"--gpu-class {gpu_class!r} is not a supported class",
            hint="one of " + ", ".join(GPU_CLASSES),
        )
    return ",".join(s for s in (f"{GPU_CLASS_LABEL}={value}", selector) if s), warning


@dataclass
class GpuNode:
    name: str
    source: str  # device-plugin | mig | dra
    count: int
    labels: dict[str, str] = field(default_factory=dict)


def _quantity_int(value: Any) -> int:
    text = str(value or "0")
    return int(text) if text.isdigit() else 0


def _dra_devices(slices: list[dict[str, Any]]) -> dict[str, int]:
    """GPU devices per node from ResourceSlices, MIG slices collapsed into their parent GPU."""
    seen: dict[str, set[tuple[str, str, str]]] = {}
    for item in slices:
        spec = item.get("spec") or {}
        node = spec.get("nodeName")
        driver = str(spec.get("driver") or "")
        if not node or (driver and "gpu" not in driver and "nvidia" not in driver):
            continue
        pool = str((spec.get("pool") or {}).get("name") or "")
        for device in spec.get("devices") or []:
            parent = str(device.get("name") or "").split("-mig-", 1)[0]
            seen.setdefault(node, set()).add((driver, pool, parent))
    return {node: len(devices) for node, devices in seen.items()}


def classify_nodes(
    nodes: list[dict[str, Any]], slices: list[dict[str, Any]]
) -> tuple[list[GpuNode], list[str]]:
    """GPU nodes (device plugin > MIG > DRA) and stranded nodes that look like GPU hardware."""
    dra = _dra_devices(slices)
    gpu_nodes, stranded = [], []
    for node in nodes:
        meta = node.get("metadata") or {}
        name, labels = meta.get("name", ""), meta.get("labels") or {}
        alloc = (node.get("status") or {}).get("allocatable") or {}
        whole = sum(
            _quantity_int(v)
            for k, v in alloc.items()
            if k.startswith("nvidia.com/") and not k.startswith("nvidia.com/mig-")
        )
        mig = sum(_quantity_int(v) for k, v in alloc.items() if k.startswith("nvidia.com/mig-"))
        if whole > 0:
            gpu_nodes.append(GpuNode(name, "device-plugin", whole, labels))
        elif mig > 0:
            gpu_nodes.append(GpuNode(name, "mig", 0, labels))
        elif dra.get(name, 0) > 0:
            gpu_nodes.append(GpuNode(name, "dra", dra[name], labels))
        elif _looks_like_gpu(labels):
            stranded.append(name)
    return gpu_nodes, stranded


def _looks_like_gpu(labels: dict[str, str]) -> bool:
    instance = labels.get(keys.INSTANCE_TYPE_LABEL, "").removeprefix("Standard_")
    return bool(
        labels.get(keys.AKS_ACCELERATOR)
        or labels.get("accelerator")
        or labels.get(GPU_CLASS_LABEL)
        or instance[:2].upper() in ("NC", "ND", "NV")
    )


def parse_probe_output(text: str) -> dict[str, str]:
    values = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key.strip():
            values[key.strip()] = value.strip()
    return values


def _int(values: dict[str, str], key: str, default: int = 0) -> int:
    try:
        return int(values.get(key, default))
    except ValueError:
        return default


@dataclass
class NodeHealth:
    node: str
    status: str
    reasons: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    pod_error: str = ""


def assess(node: GpuNode, values: dict[str, str]) -> NodeHealth:
    """Health of one node from its probe output (HEALTHY unless a rule says otherwise)."""
    health = NodeHealth(node.name, HEALTHY, values=values)
    if "nvidia_smi_rc" not in values:
        health.status, health.pod_error = UNKNOWN, "no validation output"
        return health
    if values["nvidia_smi_rc"] != "0":
        health.status = UNHEALTHY
        health.reasons.append(f"nvidia-smi failed (rc {values['nvidia_smi_rc']})")
        return health

    def worst(status: str, reason: str) -> None:
        health.reasons.append(reason)
        if status == UNHEALTHY or health.status == HEALTHY:
            health.status = status

    if values.get("mig_mode", "").lower() == "enabled" and _int(values, "mig_instances") == 0:
        worst(UNHEALTHY, "MIG enabled without instances: CUDA cannot create a context")
    seen = _int(values, "gpu_count")
    if node.source in ("device-plugin", "dra") and node.count > 0 and seen < node.count:
        worst(UNHEALTHY, f"nvidia-smi sees {seen} GPUs, {node.count} allocatable")
    inactive = _int(values, "nvlink_inactive")
    if inactive > 0:
        worst(UNHEALTHY, f"NVLink: {inactive} inactive")
    elif inactive < 0 and values.get("nvlink_rc", "0") != "0":
        worst(DEGRADED, "NVLink status unavailable")
    if _int(values, "ecc_dbe") > 0:
        worst(DEGRADED, f"{values['ecc_dbe']} uncorrected ECC errors")
    total, active = _int(values, "ib_total"), _int(values, "ib_active")
    if total > 0 and active < total:
        worst(DEGRADED, f"InfiniBand: {active}/{total} ports active")
    return health


def table_row(node: GpuNode, health: NodeHealth) -> list[str]:
    v = health.values
    if node.source == "mig":
        gpus = f"{v.get('gpu_count', '?')} ({v.get('mig_instances', '0')} slices)"
    else:
        gpus = f"{v.get('gpu_count', '?')}/{node.count}"
    inactive = _int(v, "nvlink_inactive", -2)
    nvlink = "ok" if inactive == 0 else ("n/a" if inactive < 0 else f"{inactive} inactive")
    ib = f"{v.get('ib_active', '0')}/{v.get('ib_total', '0')}" if _int(v, "ib_total") else "-"
    status = health.status + (f" ({'; '.join(health.reasons)})" if health.reasons else "")
    if health.pod_error:
        status += f" (pod: {health.pod_error})"
    return [
        node.name,
        gpus,
        node.source,
        nvlink,
        ib,
        v.get("ecc_dbe", "?"),
        v.get("driver_version", "?"),
        status,
    ]


def exit_ok(results: list[NodeHealth], min_healthy: int) -> bool:
    """With --min-healthy only the healthy count matters; otherwise DEGRADED alone passes."""
    healthy = sum(r.status == HEALTHY for r in results)
    if min_healthy > 0:
        return healthy >= min_healthy
    return not any(r.status in (UNHEALTHY, UNKNOWN) or r.pod_error for r in results)


def probe_pod(node: str, *, stamp: int) -> dict[str, Any]:
    name = f"tau-validate-{node}-{stamp:x}"[:63].rstrip("-.")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": PROBE_NAMESPACE, "labels": dict(PROBE_LABEL)},
        "spec": {
            "nodeName": node,
            "hostPID": True,
            "hostNetwork": True,
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "validate",
                    "image": PROBE_IMAGE,
                    "command": ["/bin/sh", "-c", PROBE_SCRIPT],
                    "securityContext": {"privileged": True},
                    "terminationMessagePolicy": "FallbackToLogsOnError",
                }
            ],
        },
    }


def run_probe(
    client: KubeClient,
    node: GpuNode,
    *,
    timeout: float,
    sleep: Callable[[float], None] = time.sleep,
) -> NodeHealth:
    """Create the probe pod, wait for it to finish, parse its output, always delete it."""
    pod = probe_pod(node.name, stamp=time.time_ns())
    name = pod["metadata"]["name"]
    try:
        client.create(PODS, pod, PROBE_NAMESPACE)
    except KubeError as error:
        return NodeHealth(node.name, UNKNOWN, pod_error=f"cannot create probe pod: {error}")
    try:
        deadline = time.monotonic() + max(timeout, 10.0)
        phase, current = "", pod
        while time.monotonic() < deadline:
            current = client.get(PODS, name, PROBE_NAMESPACE)
            phase = (current.get("status") or {}).get("phase", "")
            if phase in ("Succeeded", "Failed"):
                break
            sleep(2.0)
        if phase not in ("Succeeded", "Failed"):
            return NodeHealth(
                node.name,
                UNKNOWN,
                pod_error=f"probe pod still {phase or 'Pending'} after {timeout:.0f}s",
            )
        message = ""
        for status in (current.get("status") or {}).get("containerStatuses") or []:
            message = ((status.get("state") or {}).get("terminated") or {}).get("message") or ""
        return assess(node, parse_probe_output(message))
    except KubeError as error:
        return NodeHealth(node.name, UNKNOWN, pod_error=str(error))
    finally:
        with contextlib.suppress(KubeError):
            client.delete(PODS, name, PROBE_NAMESPACE, ignore_missing=True)


def discover(client: KubeClient, selector: str) -> tuple[list[GpuNode], list[str]]:
    nodes = client.list(NODES, label_selector=selector)
    try:
        slices = client.list(RESOURCE_SLICES)
    except KubeError:
        slices = []  # DRA is optional: best effort
    return classify_nodes(nodes, slices)

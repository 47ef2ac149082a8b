"""`tau cluster validate nodes`: GPU node discovery and the privileged node probe.

Discovery and the health rating are pure functions of Node/ResourceSlice objects and of the
outcomes of the node suite (`tau.cluster.suites`), tested on recorded command outputs. The
probe itself is one short-lived privileged pod per node that only sleeps: pytest and testinfra
run on the operator's side and inspect the node through testinfra's kubectl backend (one
`kubectl exec` per command, in the node's root filesystem with chroot), so no test code
and no result parsing lives in the privileged pod.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau import keys
from tau.cluster import suites
from tau.errors import UsageError
from tau.kube import KubeClient, KubeError
from tau.kube.resources import NODES, PODS, RESOURCE_SLICES
from tau.runconfig.models import GPU_CLASS_ALIASES, GPU_CLASSES

GPU_CLASS_LABEL = keys.GPU_CLASS
PROBE_NAMESPACE = "default"
PROBE_CONTAINER = "validate"
PROBE_LABEL = {keys.APP_MANAGED_BY: keys.PROBE_MANAGED_BY_VALUE}
NO_GPU = "none"  # the source of a node probed with --include-cpu that advertises no GPU
# The pod outlives a dead tau by at most this much beyond its timeout, then exits by itself.
POD_GRACE_SECONDS = 60

HEALTHY, DEGRADED, UNHEALTHY, UNKNOWN = "HEALTHY", "DEGRADED", "UNHEALTHY", "UNKNOWN"


def default_image() -> str:
    """The runtime image of this tau version: it has a shell, sleep and chroot."""
    from tau.resolve.direct import DEFAULT_RUNTIME_IMAGE

    return DEFAULT_RUNTIME_IMAGE


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
    source: str  # device-plugin | mig | dra | none (no GPU, probed with --include-cpu)
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
    nodes: list[dict[str, Any]], slices: list[dict[str, Any]], *, include_cpu: bool = False
) -> tuple[list[GpuNode], list[str]]:
    """GPU nodes (device plugin > MIG > DRA) and stranded nodes that look like GPU hardware;
    with `include_cpu` every other node too, as source `none`."""
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
        elif include_cpu:
            gpu_nodes.append(GpuNode(name, NO_GPU, 0, labels))
    return gpu_nodes, stranded


def _looks_like_gpu(labels: dict[str, str]) -> bool:
    instance = labels.get(keys.INSTANCE_TYPE_LABEL, "").removeprefix("Standard_")
    return bool(
        labels.get(keys.AKS_ACCELERATOR)
        or labels.get("accelerator")
        or labels.get(GPU_CLASS_LABEL)
        or instance[:2].upper() in ("NC", "ND", "NV")
    )


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
    values: dict[str, str] = field(default_factory=dict)  # facts the checks recorded
    pod_error: str = ""
    checks: list[suites.Check] = field(default_factory=list)


def _reason(check: suites.Check) -> str:
    """A check's own message ("NVLink: 4 inactive"); pytest's bare `assert ...` introspection
    is prefixed with the check's name so the reason says what failed."""
    if check.message and not check.message.startswith("assert "):
        return check.message
    return f"{check.name} failed" + (f": {check.message}" if check.message else "")


def rate(node: GpuNode, result: suites.SuiteResult) -> NodeHealth:
    """Health of one node from its checks: HEALTHY unless a check failed (UNHEALTHY, or
    DEGRADED for checks marked `degraded`); UNKNOWN when a check, or the suite, could not run."""
    health = NodeHealth(node.name, HEALTHY, values=result.facts, checks=result.checks)
    if result.error:
        health.status, health.pod_error = UNKNOWN, result.error
        return health
    broken = next((c for c in result.checks if c.outcome == suites.ERROR), None)
    if broken is not None:
        health.status = UNKNOWN
        health.pod_error = f"{broken.name} could not run: {broken.message or 'error'}"
        return health
    for check in result.checks:
        if check.outcome != suites.FAILED:
            continue
        health.reasons.append(_reason(check))
        if check.severity != suites.DEGRADED_SEVERITY:
            health.status = UNHEALTHY
        elif health.status == HEALTHY:
            health.status = DEGRADED
    return health


def table_row(node: GpuNode, health: NodeHealth) -> list[str]:
    v = health.values
    if node.source == NO_GPU:
        gpus = "no GPU"
    elif node.source == "mig":
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
        "-" if node.source == NO_GPU else v.get("ecc_dbe", "?"),
        "-" if node.source == NO_GPU else v.get("driver_version", "?") or "?",
        status,
    ]


def exit_ok(results: list[NodeHealth], min_healthy: int) -> bool:
    """With --min-healthy only the healthy count matters; otherwise DEGRADED alone passes."""
    healthy = sum(r.status == HEALTHY for r in results)
    if min_healthy > 0:
        return healthy >= min_healthy
    return not any(r.status in (UNHEALTHY, UNKNOWN) or r.pod_error for r in results)


def probe_pod(node: str, *, stamp: int, image: str, seconds: int) -> dict[str, Any]:
    """A privileged pod pinned to `node` that sleeps while the checks `kubectl exec` into it.

    The node's / is mounted read-only at /host for `chroot /host` (no mount propagation: that
    needs a shared root mount, and the probe lives too briefly to miss new mounts); hostPID
    and hostNetwork show the node's processes and network to the container itself. The sleep
    bounds how long a pod left behind by a killed tau lives."""
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
            "terminationGracePeriodSeconds": 0,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": PROBE_CONTAINER,
                    "image": image,
                    "command": ["sleep", str(seconds)],
                    "securityContext": {"privileged": True, "runAsUser": 0, "runAsGroup": 0},
                    "volumeMounts": [
                        {
                            "name": "host",
                            "mountPath": suites.HOST_ROOT,
                            "readOnly": True,
                        }
                    ],
                }
            ],
            "volumes": [{"name": "host", "hostPath": {"path": "/", "type": "Directory"}}],
        },
    }


def _container_state(pod: dict[str, Any]) -> str:
    """Why the probe container is not running (` (ImagePullBackOff: ...)`), or ""."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        state = status.get("state") or {}
        detail = state.get("waiting") or state.get("terminated") or {}
        reason = detail.get("reason") or ""
        if reason:
            message = str(detail.get("message") or "").strip().splitlines()
            return f" ({reason}: {message[0]})" if message else f" ({reason})"
    return ""


def _exec_error(pod: str, context: str, timeout: float) -> str:
    """Why `kubectl exec` into the probe pod and chroot into the node fail, or ""."""
    argv = ["kubectl", *(["--context", context] if context else []), "-n", PROBE_NAMESPACE]
    argv += [
        "exec",
        pod,
        "-c",
        PROBE_CONTAINER,
        "--",
        "chroot",
        suites.HOST_ROOT,
        "/bin/sh",
        "-c",
        "true",
    ]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=max(timeout, 5.0), check=False
        )
    except subprocess.TimeoutExpired:
        return f"kubectl exec into the probe pod did not answer within {max(timeout, 5.0):.0f}s"
    if done.returncode == 0:
        return ""
    lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
    detail = lines[-1].strip() if lines else f"exit {done.returncode}"
    return f"kubectl exec into the probe pod failed: {detail}"


def run_probe(
    client: KubeClient,
    node: GpuNode,
    *,
    timeout: float,
    image: str,
    suite_dirs: Sequence[Path],
    context: str = "",
    sleep: Callable[[float], None] = time.sleep,
) -> NodeHealth:
    """Create the probe pod, wait until it runs, run the suites through it, always delete it.

    `timeout` bounds the whole probe of this node: the pod's start and the checks."""
    budget = max(timeout, 10.0)
    deadline = time.monotonic() + budget
    pod = probe_pod(
        node.name, stamp=time.time_ns(), image=image, seconds=int(budget) + POD_GRACE_SECONDS
    )
    name = pod["metadata"]["name"]
    try:
        client.create(PODS, pod, PROBE_NAMESPACE)
    except KubeError as error:
        return NodeHealth(node.name, UNKNOWN, pod_error=f"cannot create probe pod: {error}")
    try:
        phase, current = "", pod
        while time.monotonic() < deadline:
            current = client.get(PODS, name, PROBE_NAMESPACE)
            phase = (current.get("status") or {}).get("phase", "")
            if phase in ("Running", "Succeeded", "Failed"):
                break
            sleep(1.0)
        if phase != "Running":
            state = phase or "Pending"
            waited = f" after {timeout:.0f}s" if state == "Pending" else ""
            stuck = f"probe pod {state}{waited}{_container_state(current)}"
            return NodeHealth(node.name, UNKNOWN, pod_error=stuck)
        unreachable = _exec_error(name, context, min(30.0, deadline - time.monotonic()))
        if unreachable:
            return NodeHealth(node.name, UNKNOWN, pod_error=unreachable)
        host = suites.kubectl_host(name, PROBE_NAMESPACE, PROBE_CONTAINER, context)
        options = [
            f"--tau-node-name={node.name}",
            f"--tau-gpu-source={node.source}",
            f"--tau-gpu-count={node.count}",
        ]
        result = suites.run(suite_dirs, host, options=options, timeout=deadline - time.monotonic())
        return rate(node, result)
    except KubeError as error:
        return NodeHealth(node.name, UNKNOWN, pod_error=str(error))
    finally:
        with contextlib.suppress(KubeError):
            client.delete(PODS, name, PROBE_NAMESPACE, ignore_missing=True)


def discover(
    client: KubeClient, selector: str, *, include_cpu: bool = False
) -> tuple[list[GpuNode], list[str]]:
    nodes = client.list(NODES, label_selector=selector)
    try:
        slices = client.list(RESOURCE_SLICES)
    except KubeError:
        slices = []  # DRA is optional: best effort
    return classify_nodes(nodes, slices, include_cpu=include_cpu)

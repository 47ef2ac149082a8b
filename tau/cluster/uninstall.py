"""`tau cluster uninstall`: drain the release's queue policy while Kueue runs, then uninstall.

Helm deletes Deployments before custom resources, so a one-pass uninstall takes Kueue down
while its ClusterQueue, ResourceFlavor and Topology still carry the resource-in-use
finalizer, and nothing remains to clear it. Phase 1 re-renders the deployed chart version
with `baselineQueue.enabled=false`; phase 2 is `helm uninstall`. A failed drain never blocks
the uninstall; it only names the objects that may strand.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tau import keys
from tau.cluster.chart import ChartRef, renderable
from tau.cluster.helm import HELM_OWNER, Helm
from tau.cluster.install import release_values, server_side_args
from tau.errors import RuntimeFailure
from tau.kube import KubeClient, KubeError
from tau.kube.resources import CLUSTER_QUEUES, RESOURCE_FLAVORS, TOPOLOGIES

Progress = Callable[[str], None]
# How long deleted queue objects may take to lose Kueue's finalizers before we call them stranded.
DRAIN_SETTLE_SECONDS = 30.0


@dataclass
class UninstallOptions:
    chart: ChartRef
    release: str
    namespace: str
    context: str = ""
    timeout: str = "15m"
    wait: bool = True
    dry_run: bool = False
    keep_history: bool = False
    no_hooks: bool = False
    drain_queue: bool = True

    def context_args(self) -> list[str]:
        return ["--kube-context", self.context] if self.context else []


@dataclass(frozen=True)
class QueueObjects:
    cluster_queue: str = keys.DEFAULT_QUEUE
    flavors: tuple[str, ...] = ("taugrid-default-cpu", "taugrid-default-gpu")
    topology: str | None = "default-node-topology"

    def names(self) -> list[str]:
        out = [f"clusterqueue/{self.cluster_queue}"] + [f"resourceflavor/{f}" for f in self.flavors]
        return out + ([f"topology/{self.topology}"] if self.topology else [])


def queue_objects(values: dict[str, Any]) -> QueueObjects | None:
    """The release's queue objects, or None when the baseline queue is known disabled."""
    queue = values.get("baselineQueue") or {}
    if queue.get("enabled") is False:
        return None
    flavors = [str((queue.get("flavor") or {}).get("name") or "taugrid-default-cpu")]
    gpu = queue.get("gpu") or {}
    if gpu.get("enabled", True):
        flavors += [str(f.get("name")) for f in gpu.get("flavors") or [] if f.get("name")]
    topology = queue.get("topology") or {}
    return QueueObjects(
        cluster_queue=str(queue.get("name") or keys.DEFAULT_QUEUE),
        flavors=tuple(flavors),
        topology=str(topology.get("name") or "default-node-topology")
        if topology.get("enabled", True)
        else None,
    )


def drain_args(opts: UninstallOptions, chart: str, version: str, helm: Helm) -> list[str]:
    """Never --install/--atomic/--wait/--reset-values/--create-namespace: only remove the queue."""
    args = ["upgrade", opts.release, chart, "--namespace", opts.namespace]
    if opts.chart.local_dir is None:
        args += ["--version", version]
    args += ["--timeout", opts.timeout, "--reuse-values", "--set", "baselineQueue.enabled=false"]
    args += opts.context_args()
    if opts.no_hooks:
        args.append("--no-hooks")
    return args + server_side_args(helm)


def uninstall_args(opts: UninstallOptions) -> list[str]:
    args = ["uninstall", opts.release, "--namespace", opts.namespace, "--timeout", opts.timeout]
    args += ["--ignore-not-found", *opts.context_args()]
    for flag, on in (
        ("--wait", opts.wait),
        ("--dry-run", opts.dry_run),
        ("--keep-history", opts.keep_history),
        ("--no-hooks", opts.no_hooks),
    ):
        if on:
            args.append(flag)
    return args


@dataclass
class UninstallOutcome:
    drained: bool = False
    objects: QueueObjects | None = None
    notes: list[str] = field(default_factory=list)


def _settle(
    remaining: Callable[[QueueObjects], list[str] | None],
    objects: QueueObjects,
    budget: float,
    sleep: Callable[[float], None],
) -> list[str] | None:
    """Kueue clears its finalizers asynchronously: give deleted queue objects a moment."""
    left = remaining(objects)
    waited = 0.0
    while left and waited < budget:
        sleep(1.0)
        waited += 1.0
        left = remaining(objects)
    return left


def drain(
    helm: Helm,
    opts: UninstallOptions,
    remaining: Callable[[QueueObjects], list[str] | None],
    progress: Progress,
    sleep: Callable[[float], None] = time.sleep,
) -> UninstallOutcome:
    outcome = UninstallOutcome()
    if opts.dry_run or not opts.drain_queue:
        return outcome
    values = release_values(helm, opts.release, opts.namespace, opts.context)
    if values is None:
        outcome.objects = QueueObjects()
        outcome.notes.append(
            "release values unreadable: skipping the queue drain; these objects may strand: "
            + ", ".join(outcome.objects.names())
        )
        return outcome
    objects = queue_objects(values)
    if objects is None:
        return outcome
    outcome.objects = objects
    meta = helm.run(
        [
            "get",
            "metadata",
            opts.release,
            "--namespace",
            opts.namespace,
            "-o",
            "json",
            *opts.context_args(),
        ]
    )
    if not meta.ok:
        return outcome
    info = json.loads(meta.stdout or "{}")
    version, deployed_chart = info.get("version", ""), info.get("chart", "")
    if not version:
        outcome.notes.append("deployed chart version unknown: skipping the queue drain")
        return outcome
    if deployed_chart != opts.chart.name:
        outcome.notes.append(
            f"release was installed from chart {deployed_chart}, not {opts.chart.name} "
            f"(--chart {opts.chart.ref}): skipping the queue drain"
        )
        return outcome
    progress(f"phase 1: draining queue policy ({', '.join(objects.names())}) while Kueue runs")
    with renderable(opts.chart) as chart:
        result = helm.run(drain_args(opts, chart, version, helm))
    if not result.ok:
        outcome.notes.append(f"queue drain failed: {result.error_line()}")
        return outcome
    left = _settle(remaining, objects, DRAIN_SETTLE_SECONDS, sleep)
    if left is None or left:
        outcome.notes.append(
            "queue objects still present after the drain (Kueue holds resource-in-use until "
            "active runs finish): " + ", ".join(left or objects.names())
        )
        return outcome
    outcome.drained = True
    return outcome


def recovery_guidance(objects: QueueObjects) -> str:
    patches = "; ".join(
        f'kubectl patch {name} --type=merge -p \'{{"metadata":{{"finalizers":null}}}}\''
        for name in objects.names()
    )
    return (
        "delete Jobs/RayJobs and Kueue workloads in workspace namespaces, then clear the "
        f"stranded finalizers: {patches}"
    )


def uninstall(
    helm: Helm, opts: UninstallOptions, outcome: UninstallOutcome, progress: Progress
) -> None:
    progress("phase 2: helm uninstall")
    result = helm.run(uninstall_args(opts))
    if result.ok:
        return
    hint = ""
    if not outcome.drained and outcome.objects is not None:
        hint = recovery_guidance(outcome.objects)
    raise RuntimeFailure(
        f"helm uninstall failed: {result.error_line()}", hint=hint, owner=HELM_OWNER
    )


def remaining_queue_objects(client: KubeClient, objects: QueueObjects) -> list[str] | None:
    """Queue objects still present (None when the cluster cannot tell)."""
    checks = [(CLUSTER_QUEUES, objects.cluster_queue)]
    checks += [(RESOURCE_FLAVORS, f) for f in objects.flavors]
    if objects.topology:
        checks.append((TOPOLOGIES, objects.topology))
    try:
        return [
            f"{res.kind.lower()}/{name}" for res, name in checks if client.get_or_none(res, name)
        ]
    except KubeError:
        return None

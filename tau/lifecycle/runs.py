"""`tau run list` and `tau run cancel`: the namespace's runs, and stopping one for good.

Cancel deletes the workload with background propagation (its pods and Kueue Workload go
with it, so Kueue releases the quota) and, by default, waits until no pod of the run still
holds a node: quota released is not the same as GPUs reusable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tau import keys
from tau.errors import RuntimeFailure
from tau.jsontypes import JSONObject
from tau.kube import AuthorizationError, KubeClient, NotFoundError, ObjectLister, Resource
from tau.kube.deletion import delete
from tau.kube.resources import JOBS, PODS, RAY_CLUSTERS, RAY_JOBS, SERVICES, WORKLOADS
from tau.lifecycle import objects as o


def _optional(
    kube: ObjectLister, resource: Resource, namespace: str, selector: str = ""
) -> list[JSONObject]:
    """A list that is empty when the type is not installed (or, for RayClusters, not
    readable by the researcher role: their pods are still watched through the pod list)."""
    try:
        return kube.list(resource, namespace, label_selector=selector)
    except NotFoundError as error:
        if error.resource_missing:
            return []
        raise
    except AuthorizationError:
        if resource is RAY_CLUSTERS:
            return []
        raise


def is_tau(obj: JSONObject) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return any(key.startswith(keys.DOMAIN) for key in labels)


def age(created: str, now: datetime | None = None) -> str:
    try:
        moment = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    seconds = int(((now or datetime.now(UTC)) - moment).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def job_status(job: JSONObject) -> str:
    if o.job_succeeded(job):
        return "Complete"
    if o.job_failed(job):
        return "Failed"
    if (job.get("spec") or {}).get("suspend"):
        return "Suspended"
    if int(o.status(job).get("active") or 0) > 0:
        return "Running"
    return "Pending"


def list_runs(
    kube: ObjectLister, namespace: str, *, queue: str = "", include_external: bool = False
) -> JSONObject:
    jobs = _optional(kube, JOBS, namespace)
    rayjobs = _optional(kube, RAY_JOBS, namespace)
    runs = []
    for kind, items in (("Job", jobs), ("RayJob", rayjobs)):
        for obj in items:
            meta = obj.get("metadata") or {}
            owners = meta.get("ownerReferences") or []
            if kind == "Job" and any(ref.get("kind") == "RayJob" for ref in owners):
                continue
            tau = is_tau(obj)
            if not tau and not include_external:
                continue
            labels = meta.get("labels") or {}
            annotations = meta.get("annotations") or {}
            if queue and labels.get(keys.KUEUE_QUEUE_NAME) != queue:
                continue
            st = o.status(obj)
            status = (
                job_status(obj)
                if kind == "Job"
                else str(st.get("jobDeploymentStatus") or st.get("jobStatus") or "Pending")
            )
            created = meta.get("creationTimestamp", "")
            runs.append(
                {
                    "name": meta.get("name", ""),
                    "kind": kind,
                    "status": status,
                    "created": created,
                    "age": age(created),
                    "runId": labels.get(keys.RUN_ID, ""),
                    "queue": labels.get(keys.KUEUE_QUEUE_NAME, ""),
                    "namespace": namespace,
                    "cluster": annotations.get(keys.CLUSTER_NAME, ""),
                    "resourceUid": meta.get("uid", ""),
                    "durableId": labels.get(keys.DURABLE_ID, "")
                    or annotations.get(keys.DURABLE_ID, ""),
                    "source": "tau" if tau else "external",
                    "experimentTracking": bool(annotations.get(keys.EXPERIMENT_SOURCE)),
                    "experimentPath": annotations.get(keys.STELLAR_EXPERIMENT_ID, ""),
                    "executionTarget": "multiKueue"
                    if (obj.get("spec") or {}).get("managedBy") == keys.MULTIKUEUE_CONTROLLER
                    else "singleCluster",
                }
            )
    runs.sort(key=lambda run: run["created"], reverse=True)
    return {"namespace": namespace, "total": len(runs), "runs": runs, "historyState": "live-only"}


# --- cancel -------------------------------------------------------------------------------------


def held(kube: KubeClient, namespace: str, name: str) -> tuple[list[str], list[JSONObject]]:
    """(RayClusters, pods still holding capacity) that belong to run `name`."""
    clusters = [
        o.name(rc)
        for rc in _optional(kube, RAY_CLUSTERS, namespace)
        if o.name(rc) == name
        or o.name(rc).startswith(f"{name}-")
        or ((rc.get("metadata") or {}).get("labels") or {}).get("ray.io/originated-from-cr-name")
        == name
    ]
    pods: dict[str, dict[str, Any]] = {}
    for selector in (f"job-name={name}", keys.RAY_CLUSTER):
        for pod in _optional(kube, PODS, namespace, selector):
            if selector == keys.RAY_CLUSTER:
                cluster = ((pod.get("metadata") or {}).get("labels") or {}).get(
                    keys.RAY_CLUSTER, ""
                )
                if not (cluster in clusters or cluster == name or cluster.startswith(f"{name}-")):
                    continue
            if o.pod_is_active(pod):
                pods[o.name(pod)] = pod
    return sorted(clusters), [pods[n] for n in sorted(pods)]


def describe_held(clusters: list[str], pods: list[JSONObject]) -> str:
    parts = []
    if clusters:
        parts.append(f"RayCluster {','.join(clusters)}")
    nodes = sorted({o.node_name(p) for p in pods} - {""})
    parts.append(f"{len(pods)} pod(s) still holding capacity")
    text = ", ".join(parts)
    return text + (f", on {','.join(nodes)}" if nodes else "")


def manager_workloads(
    kube: KubeClient, namespace: str, name: str, uids: list[str]
) -> list[JSONObject]:
    """The Kueue Workloads of run `name` (by tau's job label, or the Kueue job-uid label of
    the deleted owners)."""
    found: dict[str, dict[str, Any]] = {}
    for selector in (f"{keys.JOB}={name}", *(f"{keys.KUEUE_JOB_UID}={uid}" for uid in uids)):
        for workload in _optional(kube, WORKLOADS, namespace, selector):
            found[o.name(workload)] = workload
    return [found[n] for n in sorted(found)]


def describe_workloads(workloads: list[JSONObject]) -> str:
    """`<workload>/<check>=<state>(<message>)` for each admission check, else the name."""
    parts = []
    for workload in workloads:
        checks = [
            f"{o.name(workload)}/{check.get('name', '')}={check.get('state', '')}"
            + (f"({check['message']})" if check.get("message") else "")
            for check in o.status(workload).get("admissionChecks") or []
        ]
        parts.extend(checks or [o.name(workload)])
    return ", ".join(parts)


def await_manager_cleanup(
    kube: KubeClient,
    namespace: str,
    name: str,
    uids: list[str],
    *,
    timeout: float,
    interval: float,
    say: Callable[[str], None],
    sleep: Callable[[float], None],
) -> None:
    """Wait until the manager's Workloads of a MultiKueue run are gone.

    MultiKueue removes a manager Workload only after the worker cluster's copy is deleted, so
    until then the run may still hold the worker's quota and a resubmission can be dispatched
    next to it. The wait is bounded by `tau run cancel --timeout`.
    """
    workloads = manager_workloads(kube, namespace, name, uids)
    if not workloads:
        return
    shown = describe_workloads(workloads)
    say(f"waiting for MultiKueue to remove the manager Workloads of {name}: {shown}")
    deadline = time.monotonic() + timeout
    while workloads:
        if time.monotonic() >= deadline:
            raise RuntimeFailure(
                f"timed out after {timeout:g}s (--timeout) waiting for MultiKueue to remove the "
                f"manager Workloads of {namespace}/{name}: {shown}",
                hint=f"retry `tau run cancel {name} -n {namespace} --timeout 5m`, or inspect with "
                f"`kubectl -n {namespace} get workloads -l {keys.JOB}={name}`",
                owner="platform operator (MultiKueue worker connection)",
            )
        sleep(interval)
        workloads = manager_workloads(kube, namespace, name, uids)
        now = describe_workloads(workloads)
        if workloads and now != shown:
            say(f"still waiting: {now}")
            shown = now
    say(f"MultiKueue manager Workloads of {name} removed")


def cancel(
    kube: KubeClient,
    namespace: str,
    name: str,
    *,
    wait: bool = True,
    teardown_timeout: float = 720,
    interval: float = 2,
    timeout: float = 30,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """Delete the run; return True when compute is released (always waits when `wait`).

    With `wait`, a MultiKueue run (its Job/RayJob managed by MultiKueue) first waits up to
    `timeout` seconds for the manager's Workloads to go, then for compute release.
    """
    deleted = 0
    multikueue: list[str] = []
    for resource, shown, object_name in (
        (RAY_JOBS, "rayjob.ray.io", name),
        (JOBS, "job.batch", name),
        (SERVICES, "service", f"{name}-headless"),
    ):
        try:
            if resource is not SERVICES:
                owner = kube.get_or_none(resource, object_name, namespace)
                if owner is not None and _managed_by_multikueue(owner):
                    multikueue.append(str((owner.get("metadata") or {}).get("uid") or ""))
            result = delete(kube, resource, object_name, namespace)
        except NotFoundError as error:
            if error.resource_missing:
                continue
            raise
        except AuthorizationError:
            # The headless Service is owned by the Job; garbage collection removes it.
            if resource is SERVICES:
                continue
            raise
        if result is not None:
            deleted += 1
            say(f'{shown} "{object_name}" deleted')
    clusters, pods = held(kube, namespace, name)
    if not deleted and not clusters and not pods:
        raise RuntimeFailure(
            f'no Job or RayJob "{name}" found in namespace "{namespace}"',
            hint=f"list runs with `tau run list -n {namespace}`",
            owner="researcher: run name or namespace",
        )
    if wait and multikueue:
        await_manager_cleanup(
            kube,
            namespace,
            name,
            multikueue,
            timeout=timeout,
            interval=interval,
            say=say,
            sleep=sleep,
        )
        clusters, pods = held(kube, namespace, name)
    if not clusters and not pods:
        say(f"compute released: no RayCluster or pods remain for {name}")
        return True
    if not wait:
        say(f"teardown is asynchronous and NOT complete: {describe_held(clusters, pods)}")
        say(
            "warning: resubmitting now can be admitted against quota that is still in use; "
            f"re-run with --wait, or poll: kubectl -n {namespace} get pods -l job-name={name}"
        )
        return False
    say(f"waiting for {name} to release compute ({describe_held(clusters, pods)})")
    deadline = time.monotonic() + teardown_timeout
    while clusters or pods:
        if time.monotonic() >= deadline:
            raise RuntimeFailure(
                f"timed out after {teardown_timeout:g}s waiting for {namespace}/{name} to release "
                f"compute: {describe_held(clusters, pods)}; do NOT resubmit yet",
                hint=f"retry `tau run cancel {name} -n {namespace}`, or inspect with "
                f"`kubectl -n {namespace} get pods -l job-name={name}`",
                owner="platform operator (controllers deleting the pods)",
            )
        sleep(interval)
        clusters, pods = held(kube, namespace, name)
    say(f"compute released: no RayCluster or pods remain for {name}")
    return True


def _managed_by_multikueue(owner: JSONObject) -> bool:
    return bool((owner.get("spec") or {}).get("managedBy") == keys.MULTIKUEUE_CONTROLLER)

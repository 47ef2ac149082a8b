"""The ordered startup phase tree: the first phase that is not done is the layer to look at.

Pure functions of a `Snapshot`, so every decision can be replayed from a recorded snapshot.
Each phase names the owner of the layer (troubleshooting guide), so a stuck run tells the
researcher whether to fix their config or to call the platform.
"""

from __future__ import annotations

from tau import keys
from tau.jsontypes import JSONObject
from tau.lifecycle import causes
from tau.lifecycle import objects as o
from tau.lifecycle.pending import describe, shortfalls
from tau.lifecycle.snapshot import Snapshot, claim_names
from tau.run import failures
from tau.run.failures import IMAGE_OWNER, NODE_OWNER, PLATFORM, QUEUE_OWNER, RESEARCHER
from tau.run.status import ACTIVE, DONE, PENDING, SKIPPED, WARNING, Phase

__all__ = [
    "ACTIVE",
    "DONE",
    "IMAGE_OWNER",
    "NODE_OWNER",
    "PENDING",
    "PLATFORM",
    "QUEUE_OWNER",
    "RESEARCHER",
    "SKIPPED",
    "WARNING",
    "Phase",
]

MANAGER_VIEW = "manager view only; worker-cluster pod lifecycle is not visible here"
POD_PHASES = (
    "Pod scheduling",
    "DRA allocation",
    "Image pull",
    "Init containers",
    "Container start",
    "Ready",
)


# --- predicates over the snapshot ---------------------------------------------------------------


def primary_failed(snap: Snapshot) -> bool:
    if snap.job is not None:
        return o.job_failed(snap.job)
    return o.rayjob_failed(snap.rayjob)


def primary_succeeded(snap: Snapshot) -> bool:
    if snap.job is not None:
        return o.job_succeeded(snap.job)
    return o.rayjob_succeeded(snap.rayjob)


def is_multikueue_check(snap: Snapshot, check: str) -> bool:
    controller = snap.check_controllers.get(check)
    if controller:
        return controller == keys.MULTIKUEUE_CONTROLLER
    return check == "multikueue"


def multikueue_checks(snap: Snapshot) -> list[tuple[str, JSONObject]]:
    return [
        (o.name(wl), check)
        for wl in snap.workloads
        for check in o.status(wl).get("admissionChecks") or []
        if is_multikueue_check(snap, check.get("name", ""))
    ]


def is_multikueue(snap: Snapshot) -> bool:
    for owner in (snap.job, snap.rayjob):
        if ((owner or {}).get("spec") or {}).get("managedBy") == keys.MULTIKUEUE_CONTROLLER:
            return True
    for wl in snap.workloads:
        st = o.status(wl)
        if st.get("clusterName") or st.get("nominatedClusterNames"):
            return True
    return bool(multikueue_checks(snap))


def manager_only(snap: Snapshot) -> bool:
    return is_multikueue(snap) and not snap.pods


def workload_state(wl: JSONObject) -> str:
    if o.is_true(wl, "Finished"):
        return "Finished"
    if o.is_true(wl, "Admitted"):
        return "Admitted"
    if o.is_true(wl, "QuotaReserved"):
        return "QuotaReserved"
    return "Pending"


def workload_reason(wl: JSONObject) -> str:
    """Why a workload waits: a preemption/eviction note first, then the pending condition."""
    for cond in o.conditions(wl):
        if cond.get("status") != "True":
            continue
        if (
            "evict" in str(cond.get("type", "")).lower()
            or "preempt" in str(cond.get("reason", "")).lower()
        ):
            return f"{cond.get('reason', '')}: {cond.get('message', '')}".strip(": ")
    if workload_state(wl) in ("Pending", "QuotaReserved"):
        waiting = o.condition(wl, "QuotaReserved") or o.condition(wl, "Admitted")
        if waiting and waiting.get("status") == "False":
            return f"{waiting.get('reason', '')}: {waiting.get('message', '')}".strip(": ")
    return ""


def waiting_container_failure(snap: Snapshot) -> bool:
    return any(
        o.waiting_reason(cs) in o.START_FAILURES + o.PULL_FAILURES
        for pod in snap.pods
        for cs in o.container_statuses(pod) + o.container_statuses(pod, True)
    )


def startup_failed(snap: Snapshot) -> bool:
    if primary_failed(snap):
        return True
    if primary_succeeded(snap):
        return False
    if manager_only(snap) and any(c.get("state") == "Rejected" for _, c in multikueue_checks(snap)):
        return True
    if snap.found:
        return waiting_container_failure(snap)
    return waiting_container_failure(snap) or any(o.pod_failed(p) for p in snap.pods)


def startup_complete(snap: Snapshot, phases: list[Phase]) -> bool:
    if primary_succeeded(snap):
        return True
    return not manager_only(snap) and all(p.status in (DONE, SKIPPED) for p in phases)


def watch_failed(snap: Snapshot) -> bool:
    if primary_failed(snap):
        return True
    if primary_succeeded(snap):
        return False
    if manager_only(snap):
        return any(
            check.get("state") == "Rejected"
            for wl in snap.workloads
            for check in o.status(wl).get("admissionChecks") or []
        )
    return startup_failed(snap)


def watch_complete(snap: Snapshot, phases: list[Phase]) -> bool:
    if watch_failed(snap):
        return False
    if primary_succeeded(snap):
        return True
    if manager_only(snap):
        if o.status(snap.rayjob).get("jobDeploymentStatus") == "Suspended":
            return False
        if int(o.status(snap.job).get("active") or 0) > 0:
            return True
        if o.status(snap.rayjob).get("jobDeploymentStatus") == "Running":
            return True
        checks = [c for wl in snap.workloads for c in o.status(wl).get("admissionChecks") or []]
        return bool(checks) and all(c.get("state") == "Ready" for c in checks)
    return startup_complete(snap, phases)


def state(snap: Snapshot) -> str:
    """Canonical lifecycle state for JSON consumers."""
    if not snap.found:
        return "not_found"
    if primary_failed(snap) or startup_failed(snap):
        return "failed"
    if primary_succeeded(snap):
        return "succeeded"
    if snap.job is not None:
        if int(o.status(snap.job).get("active") or 0) > 0:
            return "running"
        if (snap.job.get("spec") or {}).get("suspend"):
            return "queued"
    else:
        deployment = o.status(snap.rayjob).get("jobDeploymentStatus")
        if deployment == "Running":
            return "running"
        if deployment == "Suspended":
            return "queued"
    if any(workload_state(wl) in ("Pending", "QuotaReserved") for wl in snap.workloads):
        return "queued"
    return "starting"


def display_state(snap: Snapshot) -> str:
    if snap.job is not None:
        if o.job_failed(snap.job):
            return "Failed"
        if o.job_succeeded(snap.job):
            return "Complete"
        if int(o.status(snap.job).get("active") or 0) > 0:
            return "Running"
        if (snap.job.get("spec") or {}).get("suspend"):
            return "Pending (suspended; Kueue not yet admitted)"
        return "Admitted (no active pods yet)"
    if snap.rayjob is not None:
        if o.rayjob_failed(snap.rayjob):
            return "Failed"
        if o.rayjob_succeeded(snap.rayjob):
            return "Complete"
        deployment = str(o.status(snap.rayjob).get("jobDeploymentStatus") or "")
        if deployment == "Running":
            return "Running"
        if deployment == "Suspended":
            return "Pending (suspended; Kueue not yet admitted)"
        if deployment == "Initializing":
            return "Initializing"
        return deployment if deployment and deployment != "New" else "New"
    return "NotFound"


# --- the phases ---------------------------------------------------------------------------------


def build(snap: Snapshot) -> list[Phase]:
    phases = [submitted(snap), kueue_admission(snap)]
    manager = manager_only(snap)
    if manager:
        phases.append(multikueue_placement(snap))
    rayjob = snap.primary_rayjob
    if rayjob is not None:
        phases.append(ray_cluster(snap))
    if manager:
        phases += [Phase(name, SKIPPED, MANAGER_VIEW) for name in POD_PHASES]
    else:
        phases += [
            pod_scheduling(snap),
            dra_allocation(snap),
            image_pull(snap),
            init_containers(snap),
            container_start(snap),
            ready(snap),
        ]
    if rayjob is not None:
        phases += [rayjob_status(snap), compute_release(snap, manager)]
        _ray_post_process(snap, phases)
    return phases


def submitted(snap: Snapshot) -> Phase:
    if snap.job is not None:
        created = snap.job["metadata"].get("creationTimestamp", "")
        return Phase("Submitted", DONE, "batch/v1 Job created", started_at=created)
    if snap.rayjob is not None:
        created = snap.rayjob["metadata"].get("creationTimestamp", "")
        return Phase("Submitted", DONE, "RayJob created", started_at=created)
    return Phase("Submitted", PENDING, "no batch/v1 Job or RayJob found", owner=RESEARCHER)


def kueue_admission(snap: Snapshot) -> Phase:
    name = "Kueue admission"
    if not snap.workloads:
        hint = f"check the {keys.KUEUE_QUEUE_NAME} label if this stays empty"
        if snap.found:
            return Phase(name, ACTIVE, "waiting for Kueue Workload", hint, QUEUE_OWNER)
        return Phase(name, PENDING, "workload not observed", hint, QUEUE_OWNER)
    states = [workload_state(wl) for wl in snap.workloads]
    total = len(states)
    admitted, finished = states.count("Admitted"), states.count("Finished")
    queues = ",".join(
        sorted({str((wl.get("spec") or {}).get("queueName") or "") for wl in snap.workloads} - {""})
    )
    if finished == total:
        detail = f"{finished}/{total} finished; quota released"
    else:
        detail = f"{admitted + finished}/{total} admitted"
    if queues:
        detail += f" queue={queues}"
    started = next(
        (
            (o.condition(wl, "Admitted") or {}).get("lastTransitionTime", "")
            for wl in snap.workloads
            if o.is_true(wl, "Admitted")
        ),
        "",
    )
    if admitted + finished == total:
        return Phase(name, DONE, detail, started_at=started)
    reasons = [r for r in (workload_reason(wl) for wl in snap.workloads) if r]
    preempting = [r for r in reasons if "preempt" in r.lower() or "evict" in r.lower()]
    reason = (preempting or reasons or [""])[0]
    rows = shortfalls(reason)
    if rows:
        # Kueue's reason in its own words; its long sentence cut to each flavor's shortfall.
        detail += " insufficient quota: " + "; ".join(describe(r) for r in rows)
    elif reason:
        detail += f" reason={reason if len(reason) <= 200 else reason[:197] + '...'}"
    hint = ""
    if "quota" in reason.lower():
        hint = "quota is reserved per LocalQueue/ClusterQueue; check queue capacity and borrowing"
    if all(s == "Pending" for s in states) and any(
        e.get("reason") in ("Evicted", "Preempted") for e in snap.events
    ):
        return Phase(
            name,
            WARNING,
            detail,
            "Kueue reported eviction/preemption; check Workload conditions",
            QUEUE_OWNER,
        )
    return Phase(name, ACTIVE, detail, hint, QUEUE_OWNER)


def multikueue_placement(snap: Snapshot) -> Phase:
    name = "MultiKueue placement"
    if primary_succeeded(snap):
        return Phase(name, DONE, "workload completed")
    if primary_failed(snap):
        return Phase(name, WARNING, "workload failed", owner=PLATFORM)
    checks = multikueue_checks(snap)
    rejected = [c for _, c in checks if c.get("state") == "Rejected"]
    if rejected:
        message = rejected[0].get("message") or "worker-cluster placement rejected"
        return Phase(name, WARNING, message, owner=PLATFORM)
    retry = [c for _, c in checks if c.get("state") == "Retry"]
    if retry:
        return Phase(name, ACTIVE, retry[0].get("message") or "retrying worker-cluster placement")
    clusters = [o.status(wl).get("clusterName") for wl in snap.workloads]
    worker = next((c for c in clusters if c), "")
    if checks and all(c.get("state") == "Ready" for _, c in checks):
        return Phase(
            name, DONE, "worker-cluster placement ready" + (f" on {worker}" if worker else "")
        )
    if worker:
        return Phase(name, ACTIVE, f"selected worker cluster {worker}")
    nominated = sorted(
        {n for wl in snap.workloads for n in o.status(wl).get("nominatedClusterNames") or []}
    )
    if nominated:
        return Phase(name, ACTIVE, f"nominated worker clusters: {', '.join(nominated)}")
    pending = next((c.get("message") for _, c in checks if c.get("message")), "")
    return Phase(name, ACTIVE, pending or "waiting for worker-cluster placement", owner=PLATFORM)


def ray_cluster(snap: Snapshot) -> Phase:
    name = "RayCluster"
    cluster = snap.ray_cluster_name
    if not cluster:
        return Phase(name, ACTIVE, "waiting for KubeRay to create RayCluster", owner=PLATFORM)
    cluster_state = str((o.status(snap.rayjob).get("rayClusterStatus") or {}).get("state") or "")
    detail = f"created {cluster}" + (f" status={cluster_state}" if cluster_state else "")
    if o.rayjob_failed(snap.rayjob):
        return Phase(name, WARNING, detail, owner=PLATFORM)
    return Phase(name, DONE, detail)


def _scheduling_problem(snap: Snapshot) -> str:
    for pod in snap.pods:
        cond = o.condition(pod, "PodScheduled")
        if cond and cond.get("status") == "False":
            return str(cond.get("reason") or cond.get("message") or "Unschedulable")
    for event in snap.events:
        if event.get("reason") in ("FailedScheduling", "SchedulingFailed"):
            return str(event.get("reason"))
    return ""


def pod_scheduling(snap: Snapshot) -> Phase:
    name = "Pod scheduling"
    if not snap.pods:
        return Phase(name, PENDING, "no pods observed yet")
    assigned = [p for p in snap.pods if o.node_name(p)]
    detail = f"{len(assigned)}/{len(snap.pods)} assigned to nodes"
    if len(assigned) == len(snap.pods):
        nodes = sorted({o.node_name(p) for p in assigned})
        shown = ", ".join(nodes[:3]) + (f", +{len(nodes) - 3} more" if len(nodes) > 3 else "")
        return Phase(name, DONE, f"{detail}: {shown}")
    problem = _scheduling_problem(snap)
    if problem:
        return Phase(
            name,
            WARNING,
            f"{detail} reason={problem}",
            "check node selectors, queue admission, and DRA ResourceClaim allocation",
            NODE_OWNER,
        )
    return Phase(name, ACTIVE, detail, owner=NODE_OWNER)


def dra_allocation(snap: Snapshot) -> Phase:
    name = "DRA allocation"
    referenced = claim_names(snap.pods)
    if not referenced:
        return Phase(name, SKIPPED, "no ResourceClaims requested")
    if not snap.claims:
        return Phase(
            name,
            ACTIVE,
            f"{len(referenced)} ResourceClaim(s) referenced; allocation not observed",
            "check ResourceSlice availability for the device pool",
            NODE_OWNER,
        )
    fetched = {o.name(c): c for c in snap.claims}
    parts, allocated, reason = [], 0, ""
    for claim in referenced:
        obj = fetched.get(claim)
        if obj is None:
            parts.append(f"{claim}=not observed")
            continue
        if o.status(obj).get("allocation"):
            allocated += 1
            parts.append(f"{claim}=allocated")
        else:
            parts.append(f"{claim}=allocating")
    detail = f"{allocated}/{len(referenced)} allocated {', '.join(parts)}"
    if allocated == len(referenced):
        return Phase(name, DONE, detail)
    bad = [
        e
        for e in snap.events
        if any(w in str(e.get("reason", "")).lower() for w in ("failed", "unschedulable"))
        or "no suitable devices" in str(e.get("message", ""))
    ]
    if bad:
        reason = str(bad[0].get("reason") or "")
        return Phase(name, WARNING, f"{detail} reason={reason}", owner=NODE_OWNER)
    return Phase(
        name,
        ACTIVE,
        detail,
        "ResourceClaim allocation >30s often means no matching GPU device; check ResourceSlices "
        "for the pool",
        NODE_OWNER,
    )


def _past_pull(pod: JSONObject) -> bool:
    statuses = o.container_statuses(pod) + o.container_statuses(pod, True)
    if o.pod_phase(pod) == "Pending" and not statuses:
        return False
    return not any(o.waiting_reason(cs) in o.CREATING + o.PULL_FAILURES for cs in statuses)


def image_pull(snap: Snapshot) -> Phase:
    name = "Image pull"
    if not snap.pods:
        return Phase(name, PENDING, "waiting for pods")
    hint = "verify the image name, tag, registry credentials, and node egress"
    for pod in snap.pods:
        for cs in o.container_statuses(pod, True) + o.container_statuses(pod):
            if o.waiting_reason(cs) in o.PULL_FAILURES:
                return Phase(
                    name, WARNING, f"{cs.get('name')}={o.waiting_reason(cs)}", hint, IMAGE_OWNER
                )
    if all(_past_pull(p) for p in snap.pods):
        images = sorted(
            {
                str(cs.get("image") or "")
                for p in snap.pods
                for cs in o.container_statuses(p) + o.container_statuses(p, True)
            }
            - {""}
        )
        if not images:
            return Phase(name, DONE, "images available")
        shown = ", ".join(images[:2]) + (f", +{len(images) - 2} more" if len(images) > 2 else "")
        return Phase(name, DONE, f"available: {shown}")
    pulling = [e for e in snap.events if e.get("reason") == "Pulling"]
    if pulling:
        message = " ".join(str(pulling[-1].get("message") or "").split())
        if len(message) > 120:
            message = message[:117] + "..."
        return Phase(
            name, ACTIVE, message, "byte-level pull progress is not exposed by kubelet events"
        )
    return Phase(name, ACTIVE, "waiting for kubelet image pull events")


def init_containers(snap: Snapshot) -> Phase:
    name = "Init containers"
    total = sum(len((p.get("spec") or {}).get("initContainers") or []) for p in snap.pods)
    if not total:
        return Phase(name, SKIPPED, "no init containers")
    statuses = [cs for p in snap.pods for cs in o.container_statuses(p, True)]
    complete = sum(1 for cs in statuses if o.exit_code(cs) == 0)
    detail = f"{complete}/{total} complete"
    if complete == total:
        return Phase(name, DONE, detail)
    reason = next(
        (
            o.waiting_reason(cs) or str((o.terminated(cs) or {}).get("reason") or "")
            for cs in statuses
            if o.waiting_reason(cs) or (o.exit_code(cs) not in (None, 0))
        ),
        "",
    )
    if reason:
        detail += f" reason={reason}"
    hint = (
        "storage or blobfuse mount setup is still blocking init"
        if "mount" in reason.lower()
        else ""
    )
    failed = any(o.container_failed(cs) for cs in statuses)
    return Phase(name, WARNING if failed else ACTIVE, detail, hint, RESEARCHER)


def _started(cs: JSONObject) -> bool:
    """Running, or terminated after it ran: an exit (even non-zero) means it started."""
    if o.is_running(cs):
        return True
    term = o.terminated(cs)
    return term is not None and term.get("reason") not in ("ContainerCannotRun", "StartError")


def container_start(snap: Snapshot) -> Phase:
    name = "Container start"
    if not snap.pods:
        return Phase(name, PENDING, "waiting for pods")
    statuses = [(p, cs) for p in snap.pods for cs in o.container_statuses(p)]
    if not statuses:
        return Phase(name, PENDING, "container statuses not available")
    total = max(
        sum(len((p.get("spec") or {}).get("containers") or []) for p in snap.pods), len(statuses)
    )
    started = sum(1 for _, cs in statuses if _started(cs))
    detail = f"{started}/{total} started"
    failed = [(p, cs) for p, cs in statuses if o.container_failed(cs)]
    if failed:
        pod, cs = failed[0]
        reason = o.waiting_reason(cs) or str((o.terminated(cs) or {}).get("reason") or "Error")
        code = o.exit_code(cs)
        detail += f" reason={cs.get('name')}={reason}" + (f" exit={code}" if code else "")
        cause = causes.pod_cause(pod) or causes.container_cause(pod, cs)
        if cause.category != failures.APPLICATION:
            detail += f" ({cause.category})"
        return Phase(name, WARNING, detail, cause.hint, cause.owner)
    if started >= total:
        return Phase(name, DONE, detail)
    creating = any(o.waiting_reason(cs) in o.CREATING for _, cs in statuses)
    hint = (
        "container startup is still waiting on image, volume, or runtime setup" if creating else ""
    )
    return Phase(name, ACTIVE, detail, hint, RESEARCHER)


def ready(snap: Snapshot) -> Phase:
    name = "Ready"
    if not snap.pods:
        return Phase(name, PENDING, "waiting for pods")
    ready_pods = [p for p in snap.pods if o.pod_ready(p)]
    detail = f"{len(ready_pods)}/{len(snap.pods)} pods ready"
    failed = [p for p in snap.pods if o.pod_failed(p)]
    if failed:
        cause = causes.pod_cause(failed[0])
        return Phase(
            name,
            WARNING,
            f"{detail} reason={o.pod_failure_reason(failed[0])}",
            owner=cause.owner if cause is not None else RESEARCHER,
        )
    if len(ready_pods) == len(snap.pods):
        return Phase(name, DONE, detail)
    return Phase(name, ACTIVE, detail, owner=RESEARCHER)


def rayjob_status(snap: Snapshot) -> Phase:
    name = "RayJob status"
    st = o.status(snap.rayjob)
    detail = str(
        st.get("jobDeploymentStatus") or st.get("jobStatus") or "waiting for RayJob status"
    )
    if o.rayjob_failed(snap.rayjob):
        reason = st.get("reason") or st.get("message") or ""
        return Phase(
            name, WARNING, detail + (f" reason={reason}" if reason else ""), owner=RESEARCHER
        )
    lowered = detail.lower()
    if any(w in lowered for w in ("succeed", "complete", "running")):
        return Phase(name, DONE, detail)
    if detail == "waiting for RayJob status":
        return Phase(name, PENDING, detail)
    return Phase(name, ACTIVE, detail)


def compute_release(snap: Snapshot, manager: bool) -> Phase:
    name = "Compute release"
    rayjob = snap.rayjob
    if not (o.rayjob_failed(rayjob) or o.rayjob_succeeded(rayjob)):
        return Phase(name, PENDING, "waiting for RayJob terminal status")
    if manager:
        return Phase(
            name,
            SKIPPED,
            "manager view only; Kueue quota can be released before worker-cluster GPUs are "
            "reusable",
        )
    if not snap.pods_observed:
        return Phase(
            name, WARNING, "Ray pod state unavailable; physical resource reusability unknown"
        )
    finished = bool(snap.workloads) and all(workload_state(w) == "Finished" for w in snap.workloads)
    prefix = "quota released; " if finished else ""
    holding = [p for p in snap.pods if o.pod_is_active(p)]
    if holding:
        nodes = sorted({o.node_name(p) for p in holding} - {""})
        return Phase(
            name,
            ACTIVE,
            f"{prefix}resources NOT reusable; {len(holding)} Ray pod(s) still hold "
            f"{len(nodes)} node(s): {', '.join(nodes)}",
            "wait for KubeRay to delete the RayCluster and for all node-bound Ray pods to "
            "terminate",
            PLATFORM,
        )
    detail = f"{prefix}resources reusable; no active Ray pods remain"
    if snap.workloads and not finished:
        return Phase(name, ACTIVE, detail + "; waiting for Kueue quota release", owner=QUEUE_OWNER)
    return Phase(name, DONE, detail)


def _ray_post_process(snap: Snapshot, phases: list[Phase]) -> None:
    rayjob = snap.rayjob
    if snap.pods:
        return
    for phase in phases:
        if phase.name not in POD_PHASES:
            continue
        if o.rayjob_failed(rayjob) and phase.status != WARNING:
            phase.status = SKIPPED
            phase.detail = (
                "RayJob failed; post-run RayCluster teardown removed pod evidence"
                if snap.pods_observed
                else "pod state unavailable after terminal RayJob failure"
            )
            phase.hint = ""
        elif o.rayjob_succeeded(rayjob) and phase.status not in (DONE, SKIPPED):
            phase.status = DONE
            phase.detail = "RayJob completed successfully; post-run RayCluster teardown"
            phase.hint = ""

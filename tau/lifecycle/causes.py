"""What ended a pod, and who owns it, read from the cluster's evidence.

`tau run status`, automatic retry, `tau run resume`, `tau run history` and the Portal all
read a failure through these rules, so a preempted run is never an application crash in one
view and `Preempted` in another. The vocabulary itself (`Failure`, `Cause`, categories and
owners) is `tau.run.failures`, shared with the local engine.
"""

from __future__ import annotations

from tau.jsontypes import JSONObject
from tau.lifecycle import objects as o
from tau.run.failures import (
    APPLICATION,
    CONTAINER_CONFIG,
    EVICTION,
    IMAGE,
    IMAGE_OWNER,
    NODE_DISRUPTION,
    NODE_OWNER,
    OOM,
    PREEMPTION,
    QUEUE_OWNER,
    RESEARCHER,
    UNKNOWN,
    Cause,
    Failure,
)

_SCHEDULER_PREEMPTION = ("PreemptionByScheduler", "PreemptionByKubeScheduler")


def oom_killed(pod: JSONObject) -> bool:
    if o.status(pod).get("reason") == "OOMKilled":
        return True
    for cs in o.container_statuses(pod, True) + o.container_statuses(pod):
        for term in (o.terminated(cs), o.last_terminated(cs)):
            if term and term.get("reason") == "OOMKilled":
                return True
    return False


def disruption(pod: JSONObject) -> JSONObject | None:
    cond = o.condition(pod, "DisruptionTarget")
    return cond if cond and cond.get("status") == "True" else None


def evicted(pod: JSONObject) -> bool:
    if o.pod_phase(pod) != "Failed":
        return False
    reasons = [str(c.get("reason") or "") for c in o.conditions(pod)]
    reasons.append(str(o.status(pod).get("reason") or ""))
    return any(r.lower() == "evicted" for r in reasons)


def _failed_container(pod: JSONObject) -> JSONObject | None:
    statuses = o.container_statuses(pod, True) + o.container_statuses(pod)
    return next((cs for cs in statuses if o.container_failed(cs)), None)


def oom_cause(pod: JSONObject) -> Cause:
    return Cause(
        Failure.OOM_KILLED,
        OOM,
        RESEARCHER,
        f"pod {o.name(pod)} was OOM-killed (a container exceeded its memory limit)",
        "raise compute.memory_request/memory_limit in the run config; the same config will "
        "likely OOM again",
    )


def disruption_cause(pod: JSONObject, cond: JSONObject) -> Cause:
    why = str(cond.get("reason") or "DisruptionTarget")
    if why in _SCHEDULER_PREEMPTION:
        return Cause(
            Failure.PREEMPTED,
            PREEMPTION,
            QUEUE_OWNER,
            f"pod {o.name(pod)} was preempted ({why}) to make room for higher-priority work",
            "not an application error: the same config usually succeeds on resubmission; "
            "priorities and quota belong to the platform/queue owner",
        )
    return Cause(
        Failure.PREEMPTED,
        NODE_DISRUPTION,
        NODE_OWNER,
        f"pod {o.name(pod)} was terminated by the cluster ({why})",
        "not an application error: the node or the platform ended the pod; the same config "
        "usually succeeds on resubmission",
    )


def eviction_cause(subject: str) -> Cause:
    return Cause(
        Failure.EVICTED,
        EVICTION,
        NODE_OWNER,
        f"{subject} was evicted (node pressure or drain)",
        "not an application error: the same config usually succeeds on resubmission; node "
        "health belongs to the platform/node-pool owner",
    )


def container_cause(pod: JSONObject, cs: JSONObject) -> Cause:
    """A container that failed on its own: a pull, a configuration or an application exit."""
    container = cs.get("name", "")
    waiting = o.waiting_reason(cs)
    if waiting in o.PULL_FAILURES:
        return Cause(
            Failure.UNKNOWN,
            IMAGE,
            IMAGE_OWNER,
            f"container {container} cannot pull its image ({waiting})",
            "verify the image name, tag, registry credentials, and node egress",
        )
    if waiting in ("CreateContainerConfigError", "CreateContainerError", "RunContainerError"):
        return Cause(
            Failure.UNKNOWN,
            CONTAINER_CONFIG,
            RESEARCHER,
            f"container {container} cannot be created ({waiting})",
            "check the secrets, config maps and volumes the run config references",
        )
    term = o.terminated(cs) or o.last_terminated(cs) or {}
    code = term.get("exitCode")
    exited = f"exited with code {code}" if code not in (None, 0) else f"is in {waiting or 'Error'}"
    return Cause(
        Failure.UNKNOWN,
        APPLICATION,
        RESEARCHER,
        f"container {container} in pod {o.name(pod)} {exited}",
        "read its output with `tau run logs`; fix the code or config, then resubmit",
    )


def pod_cause(pod: JSONObject) -> Cause | None:
    """What ended this pod, by its own evidence (OOM, disruption, eviction, container)."""
    if oom_killed(pod):
        return oom_cause(pod)
    cond = disruption(pod)
    if cond is not None:
        return disruption_cause(pod, cond)
    if evicted(pod):
        return eviction_cause(f"pod {o.name(pod)}")
    failed = _failed_container(pod)
    return container_cause(pod, failed) if failed is not None else None


def event_cause(events: list[JSONObject]) -> Cause | None:
    """Preemption or eviction seen only in Events (the pods may be gone)."""
    for event in events:
        if "preempt" in str(event.get("reason") or "").lower():
            subject = (event.get("involvedObject") or {}).get("kind", "workload")
            message = " ".join(str(event.get("message") or "").split())[:160]
            return Cause(
                Failure.PREEMPTED,
                PREEMPTION,
                QUEUE_OWNER,
                f"the {subject.lower()} was preempted" + (f": {message}" if message else ""),
                "not an application error: the same config usually succeeds on resubmission; "
                "priorities and quota belong to the platform/queue owner",
            )
    if any(str(e.get("reason") or "").lower() == "evicted" for e in events):
        return eviction_cause("a pod")
    return None


def snapshot_cause(pods: list[JSONObject], events: list[JSONObject]) -> Cause:
    """The failure of a run, first matching rule wins: an OOM kill on any pod, then a
    disruption, then preemption Events, then eviction, then a failed container."""
    for pod in pods:
        if oom_killed(pod):
            return oom_cause(pod)
    for pod in pods:
        cond = disruption(pod)
        if cond is not None:
            return disruption_cause(pod, cond)
    preempted = event_cause([e for e in events if "preempt" in str(e.get("reason") or "").lower()])
    if preempted is not None:
        return preempted
    for pod in pods:
        if evicted(pod):
            return eviction_cause(f"pod {o.name(pod)}")
    evicted_event = event_cause(events)
    if evicted_event is not None:
        return evicted_event
    for pod in pods:
        failed = _failed_container(pod)
        if failed is not None:
            return container_cause(pod, failed)
    return Cause(
        Failure.UNKNOWN,
        UNKNOWN,
        "",
        "the run failed without evidence tau recognises",
        "inspect `tau run status` and `tau run logs` before resubmitting",
    )

"""The RunStatus document (`-o json|yaml`) and the kubectl escape hatches.

One document feeds every view: JSON/YAML consumers and the terminal (laid out by the CLI,
`tau/cli/status_view.py`) see the same phases, diagnostics (stable codes) and next actions.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from tau import keys
from tau.api.meta import API_VERSION
from tau.connection import Target
from tau.jsontypes import JSONObject
from tau.lifecycle import objects as o
from tau.lifecycle import pending
from tau.lifecycle import phases as ph
from tau.lifecycle.classify import diagnose
from tau.lifecycle.snapshot import Snapshot


def quote(arg: str) -> str:
    """POSIX single quotes; an embedded ' becomes '"'"'."""
    return "'" + arg.replace("'", "'\"'\"'") + "'"


def _command(argv: list[str], target: Target) -> JSONObject:
    argv = [*argv, *target.route_args()]
    env = target.kubeconfig_env()
    prefix = "".join(f"{k}={quote(v)} " for k, v in env.items())
    return {"argv": argv, "env": env, "shell": prefix + shlex.join(argv)}


def _logs_retrievable(snap: Snapshot) -> bool:
    if snap.job is not None:
        return bool(snap.pods)
    st = o.status(snap.rayjob)
    return bool(st.get("jobId") and st.get("rayClusterName")) and not ph.manager_only(snap)


def actions(snap: Snapshot, target: Target) -> list[JSONObject]:
    name = snap.name

    def action(key: str, description: str, argv: list[str]) -> JSONObject:
        return {"name": key, "description": description, "command": _command(argv, target)}

    logs = action("logs", "Read the run's logs", ["tau", "run", "logs", name, "--tail", "200"])
    if not snap.found:
        return [action("list", "List runs in this namespace", ["tau", "run", "list"])]
    if ph.primary_failed(snap) or ph.startup_failed(snap):
        found = [logs] if _logs_retrievable(snap) else []
        return [
            *found,
            action(
                "diagnostics",
                "Print kubectl commands for deeper inspection",
                ["tau", "run", "status", name, "--diagnostic-hints"],
            ),
        ]
    if ph.primary_succeeded(snap):
        result = [logs] if _logs_retrievable(snap) else []
        owner = snap.job or snap.rayjob or {}
        annotations = (owner.get("metadata") or {}).get("annotations") or {}
        collision = snap.job is not None and snap.rayjob is not None
        if annotations.get(keys.RESULT_PATH) and annotations.get(keys.RESULT_PVC) and not collision:
            result.append(action("results", "Fetch the run's results", ["tau", "run", "get", name]))
        return result
    watch = action("watch", "Follow startup phases", ["tau", "run", "status", name, "--watch"])
    return [watch, logs] if _logs_retrievable(snap) else [watch]


def diagnostics(snap: Snapshot, phases: list[ph.Phase], target: Target) -> list[JSONObject]:
    found: list[dict[str, Any]] = []
    if not snap.found:
        return [
            {
                "code": "RUN_NOT_FOUND",
                "severity": "error",
                "message": f'no Job or RayJob "{snap.name}" in namespace "{snap.namespace}"',
                "suggestion": "list runs with `tau run list --output json`",
                "commands": [_command(["tau", "run", "list", "--output", "json"], target)],
            }
        ]
    failed = ph.primary_failed(snap) or ph.startup_failed(snap)
    if failed:
        cause = diagnose(snap)
        found.append(
            {
                "code": "RUN_FAILED",
                "severity": "error",
                "message": f"{snap.namespace}/{snap.name} failed: {cause.reason} "
                f"({cause.category}) — {cause.summary}"
                + (f" (owner: {cause.owner})" if cause.owner else ""),
                "suggestion": cause.hint,
            }
        )
    rejected = [
        c
        for wl in snap.workloads
        for c in o.status(wl).get("admissionChecks") or []
        if c.get("state") == "Rejected"
    ]
    if rejected:
        found.append(
            {
                "code": "ADMISSION_REJECTED",
                "severity": "error",
                "message": f"admission check {rejected[0].get('name')} rejected the workload: "
                f"{rejected[0].get('message', '')}".strip(": "),
            }
        )
    warning = next((p for p in phases if p.status == ph.WARNING), None)
    if warning is not None:
        found.append(
            {
                "code": "STARTUP_FAILED" if failed else "STARTUP_WARNING",
                "severity": "error" if failed else "warning",
                "message": f"{warning.name}: {warning.detail}",
                **({"suggestion": warning.hint} if warning.hint else {}),
            }
        )
    if not failed and not rejected and not ph.primary_succeeded(snap):
        for wl in snap.workloads:
            if ph.workload_state(wl) in ("Pending", "QuotaReserved"):
                reason = ph.workload_reason(wl)
                if reason:
                    found.append(_pending_diagnostic(wl, reason, snap, target))
    for phase in phases:
        if phase.hint or phase.status == ph.WARNING:
            code = "STARTUP_" + phase.name.upper().replace(" ", "_")
            item = {
                "code": code,
                "severity": "warning" if phase.status == ph.WARNING else "info",
                "message": f"{phase.name}: {phase.detail}",
            }
            if phase.hint:
                item["suggestion"] = phase.hint
            found.append(item)
    return found


def quota_command(target: Target) -> JSONObject | None:
    """`tau workspace quota show` for the run's workspace, routed like the run: a connected
    workspace is found by name; a plain kubeconfig needs its context and system namespace."""
    if not target.workspace:
        return None
    argv = ["tau", "workspace", "quota", "show", target.workspace]
    if not target.isolated:
        argv += ["--context", target.context] if target.context else []
        if target.system_namespace:
            argv += ["--system-namespace", target.system_namespace]
    env = target.kubeconfig_env()
    prefix = "".join(f"{k}={quote(v)} " for k, v in env.items())
    return {"argv": argv, "env": env, "shell": prefix + shlex.join(argv)}


def _pending_diagnostic(wl: JSONObject, reason: str, snap: Snapshot, target: Target) -> JSONObject:
    """Kueue's reason in full, each flavor's shortfall on its own line."""
    name = o.name(wl)
    since = (wl.get("metadata") or {}).get("creationTimestamp", "")
    waited = pending.waited(since)
    rows = pending.shortfalls(reason)
    head = f"Workload {name} is not admitted" + (f" (waiting {waited})" if waited else "")
    shortfall = "; ".join(pending.describe(r) for r in rows)
    detail = f"insufficient quota: {shortfall}" if rows else reason
    queue = (wl.get("spec") or {}).get("queueName", "")
    return {
        "code": "KUEUE_PENDING",
        "severity": "warning",
        "message": f"{head}: {detail}",
        **_quota_hint(target, snap.cluster_queues.get(queue, "")),
    }


def _quota_hint(target: Target, cluster_queue: str = "") -> JSONObject:
    command = quota_command(target)
    owner = "the platform operator owns the queue's quota" + (
        f" (ClusterQueue {cluster_queue})" if cluster_queue else ""
    )
    if command is None:
        return {"suggestion": owner}
    return {
        "suggestion": f"see the queue's quota and usage with `{command['shell']}`; {owner}",
        "commands": [command],
    }


def document(
    snap: Snapshot,
    target: Target,
    *,
    profile: JSONObject | None = None,
) -> JSONObject:
    phases = ph.build(snap)
    owner = snap.job if snap.job is not None else snap.rayjob
    meta = (owner or {}).get("metadata") or {}
    job_st = o.status(snap.job)
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "RunStatus",
        "metadata": {
            "name": snap.name,
            "namespace": snap.namespace,
            "labels": meta.get("labels") or {},
            "annotations": meta.get("annotations") or {},
        },
        "status": {
            "found": snap.found,
            "workloadKind": "Job" if snap.job is not None else ("RayJob" if snap.rayjob else ""),
            "state": ph.state(snap),
            "displayState": ph.display_state(snap),
            "startupComplete": ph.startup_complete(snap, phases),
            "startupFailed": ph.startup_failed(snap),
        },
        "failure": failure(snap),
        "phases": [p.to_dict() for p in phases],
        "job": {
            "found": snap.job is not None,
            "uid": meta.get("uid", "") if snap.job is not None else "",
            "createdAt": (snap.job or {}).get("metadata", {}).get("creationTimestamp", ""),
            "startedAt": job_st.get("startTime", ""),
            "finishedAt": job_st.get("completionTime", ""),
            "suspended": bool(((snap.job or {}).get("spec") or {}).get("suspend")),
            "active": int(job_st.get("active") or 0),
            "succeeded": int(job_st.get("succeeded") or 0),
            "failed": int(job_st.get("failed") or 0),
            "parallelism": int(((snap.job or {}).get("spec") or {}).get("parallelism") or 0),
            "managedBy": ((snap.job or {}).get("spec") or {}).get("managedBy", ""),
            "conditions": o.conditions(snap.job),
        },
        "workloads": [_workload(wl, snap) for wl in snap.workloads],
        "pods": [_pod(p) for p in snap.pods],
        "resourceClaims": [
            {"name": o.name(c), "allocated": bool(o.status(c).get("allocation"))}
            for c in snap.claims
        ],
        "events": [
            {
                "type": e.get("type", ""),
                "reason": e.get("reason", ""),
                "object": f"{(e.get('involvedObject') or {}).get('kind', '')}/"
                f"{(e.get('involvedObject') or {}).get('name', '')}",
                "message": e.get("message", ""),
                "lastTimestamp": e.get("lastTimestamp") or e.get("eventTime") or "",
            }
            for e in snap.events
        ],
        "diagnostics": diagnostics(snap, phases, target),
        "actions": actions(snap, target),
    }
    if snap.primary_rayjob is not None:
        st = o.status(snap.rayjob)
        doc["rayJob"] = {
            "found": True,
            "uid": meta.get("uid", ""),
            "createdAt": meta.get("creationTimestamp", ""),
            "startedAt": st.get("startTime", ""),
            "finishedAt": st.get("endTime", ""),
            "rayClusterName": st.get("rayClusterName", ""),
            "jobId": st.get("jobId", ""),
            "jobDeploymentStatus": st.get("jobDeploymentStatus", ""),
            "jobStatus": st.get("jobStatus", ""),
            "reason": st.get("reason", ""),
            "message": st.get("message", ""),
        }
    if profile is not None:
        doc["metrics"] = {"gpuRuntime": profile}
        doc["profile"] = profile.get("rows", [])
    return doc


def failure(snap: Snapshot) -> JSONObject | None:
    """The run's classification once it failed (the same one retry and resume act on)."""
    if not (ph.primary_failed(snap) or ph.startup_failed(snap)):
        return None
    return diagnose(snap).to_dict()


def _workload(wl: JSONObject, snap: Snapshot) -> JSONObject:
    st = o.status(wl)
    name = o.name(wl)
    queue = (wl.get("spec") or {}).get("queueName", "")
    admission = st.get("admission") or {}
    flavors = sorted(
        {
            flavor
            for podset in admission.get("podSetAssignments") or []
            for flavor in (podset.get("flavors") or {}).values()
        }
    )
    return {
        "name": o.name(wl),
        "queue": (wl.get("spec") or {}).get("queueName", ""),
        "phase": ph.workload_state(wl),
        "admitted": o.is_true(wl, "Admitted"),
        "clusterQueue": admission.get("clusterQueue", ""),
        "flavors": flavors,
        "reason": ph.workload_reason(wl),
        "admissionChecks": [
            {
                "name": c.get("name", ""),
                "state": c.get("state", ""),
                "message": c.get("message", ""),
            }
            for c in st.get("admissionChecks") or []
        ],
        "queuePosition": _position(snap.positions.get(name)),
        **_waiting(wl, snap, name, queue),
    }


def _waiting(wl: JSONObject, snap: Snapshot, name: str, queue: str) -> JSONObject:
    """For a workload Kueue has not admitted: what it is short of per flavor, since when it
    waits, who is ahead of it, and the ClusterQueue whose quota decides it."""
    if ph.workload_state(wl) not in ("Pending", "QuotaReserved") or o.is_true(wl, "Admitted"):
        return {"waiting": None}
    cond = o.condition(wl, "QuotaReserved") or {}
    since = (wl.get("metadata") or {}).get("creationTimestamp", "")
    return {
        "waiting": {
            "since": since,
            "waited": pending.waited(since),
            "shortfall": pending.shortfalls(str(cond.get("message") or "")),
            "ahead": snap.ahead.get(name),
            "clusterQueue": snap.cluster_queues.get(queue, ""),
        }
    }


def _position(pending: JSONObject | None) -> JSONObject | None:
    """Where Kueue ranks a waiting workload (0 = next), from its visibility API."""
    if pending is None:
        return None
    return {
        "localQueue": pending.get("localQueueName", ""),
        "inLocalQueue": int(pending.get("positionInLocalQueue") or 0),
        "inClusterQueue": int(pending.get("positionInClusterQueue") or 0),
        "priority": int(pending.get("priority") or 0),
        "source": "kueue-visibility",
    }


def _pod(pod: JSONObject) -> JSONObject:
    return {
        "name": o.name(pod),
        "phase": o.pod_phase(pod),
        "node": o.node_name(pod),
        "ready": o.pod_ready(pod),
        "restarts": o.restarts(pod),
        "reason": o.pod_failure_reason(pod) if o.pod_failed(pod) else "",
    }


# --- deep diagnostics ------------------------------------------------------------------------


def diagnostic_hints(snap: Snapshot, target: Target) -> list[str]:
    """kubectl commands for what `tau` deliberately does not proxy (top, exec, raw logs)."""
    base = ["kubectl"]
    if target.context:
        base += ["--context", target.context]
    kubeconfig = target.kubectl_env().get(keys.ENV_KUBECONFIG)
    if kubeconfig:
        base += ["--kubeconfig", kubeconfig]
    base += ["-n", snap.namespace]
    collision = snap.job is not None and snap.rayjob is not None
    if snap.primary_rayjob is not None and snap.ray_cluster_name:
        selector = f"ray.io/cluster={snap.ray_cluster_name}"
    else:
        selector = f"job-name={snap.name}"
    pods = [] if collision else snap.pods

    def line(*args: str) -> str:
        return " ".join(quote(a) for a in [*base, *args])

    out = []
    if pods:
        out += [line("top", "pod", o.name(p), "--containers") for p in pods]
    else:
        out.append(line("top", "pod", "-l", selector, "--containers"))
    if not pods:
        out.append(
            line(
                "logs",
                "-l",
                selector,
                "--all-containers=true",
                "--prefix=true",
                "--timestamps=true",
            )
        )
    else:
        out.append(_logs_hint(pods, line))
        running = next(
            (
                (o.name(p), cs.get("name", ""))
                for p in pods
                for cs in o.container_statuses(p)
                if o.is_running(cs)
            ),
            None,
        )
        if running:
            out.append(line("exec", "-it", running[0], "-c", running[1], "--", "/bin/sh"))
    return out


def _logs_hint(pods: list[JSONObject], line: Callable[..., str]) -> str:
    for pod in pods:
        for cs in o.container_statuses(pod, True) + o.container_statuses(pod):
            code = o.exit_code(cs)
            if code not in (None, 0):
                return line("logs", o.name(pod), "-c", cs.get("name", ""), "--timestamps=true")
    for pod in pods:
        for cs in o.container_statuses(pod, True) + o.container_statuses(pod):
            if int(cs.get("restartCount") or 0) or o.last_terminated(cs):
                return line(
                    "logs",
                    o.name(pod),
                    "-c",
                    cs.get("name", ""),
                    "--previous",
                    "--timestamps=true",
                )
    pod = pods[0]
    containers = [c.get("name", "") for c in (pod.get("spec") or {}).get("initContainers") or []]
    containers += [c.get("name", "") for c in (pod.get("spec") or {}).get("containers") or []]
    args = ["logs", o.name(pod)] + (["-c", containers[0]] if containers else [])
    return line(*args, "--timestamps=true")

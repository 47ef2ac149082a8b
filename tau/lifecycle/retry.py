"""Automatic retry (`resilience.*`): wait for the terminal state, classify, back off, resubmit.

Only the classes listed in `retry_on` are retried and `Unknown` never is; every decision is
printed and recorded as a Kubernetes Event on the workload, so a retried run keeps the root
cause of each attempt visible.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from tau.errors import RuntimeFailure
from tau.jsontypes import JSONObject
from tau.kube import AuthorizationError, ConflictError, KubeClient, KubeError
from tau.kube.deletion import delete
from tau.kube.resources import EVENTS, JOBS, RAY_JOBS, SERVICES
from tau.lifecycle import phases as ph
from tau.lifecycle.classify import diagnose, signature
from tau.lifecycle.snapshot import Snapshot, collect
from tau.lifecycle.watch import wait_for_change
from tau.run.failures import Failure, RetryPolicy, backoff, format_duration, retry_env

if TYPE_CHECKING:
    from tau.lifecycle.submit import Prepared

POLL_SECONDS = 5.0


def _pod_specs(obj: JSONObject) -> list[JSONObject]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Job":
        return [spec["template"]["spec"]]
    cluster = spec.get("rayClusterSpec") or {}
    groups = [cluster.get("headGroupSpec") or {}, *(cluster.get("workerGroupSpecs") or [])]
    return [g["template"]["spec"] for g in groups if g.get("template")]


def durable_mount(workload: JSONObject, path: str) -> str:
    """The mount path of the non-scratch volume holding `path` in every pod of the workload,
    or "" when a checkpoint written there would vanish with the pod."""
    found = ""
    for pod in _pod_specs(workload):
        volumes = {v.get("name"): v for v in pod.get("volumes") or []}
        best = ""
        for container in pod.get("containers") or []:
            for mount in container.get("volumeMounts") or []:
                root = str(mount.get("mountPath") or "").rstrip("/")
                volume = volumes.get(mount.get("name")) or {}
                if "emptyDir" in volume or not root:
                    continue
                if (path == root or path.startswith(root + "/")) and len(root) > len(best):
                    best = root
        if not best:
            return ""
        found = found or best
    return found


def terminal(snap: Snapshot) -> bool:
    return ph.primary_succeeded(snap) or ph.primary_failed(snap)


def wait_terminal(
    kube: KubeClient, namespace: str, name: str, poll: float = POLL_SECONDS
) -> Snapshot:
    while True:
        snap = collect(kube, namespace, name)
        if terminal(snap):
            return snap
        if not snap.found:
            raise RuntimeFailure(
                f"workload {namespace}/{name} disappeared while tau was watching it "
                "(cancelled?); retries stopped",
                owner="",
            )
        wait_for_change(kube, snap, poll)


def emit_event(
    kube: KubeClient,
    snap: Snapshot,
    event_name: str,
    reason: str,
    message: str,
    say: Callable[[str], None],
) -> None:
    owner = snap.rayjob if snap.rayjob is not None else snap.job
    if owner is None:
        return
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name, "namespace": snap.namespace},
        "involvedObject": {
            "apiVersion": owner.get("apiVersion", ""),
            "kind": owner.get("kind", ""),
            "name": snap.name,
            "namespace": snap.namespace,
            "uid": owner["metadata"].get("uid", ""),
        },
        "type": "Normal",
        "reason": reason,
        "action": "Retry",
        "message": message,
        "reportingComponent": "tau-cli",
        "reportingInstance": "tau-cli",
        "source": {"component": "tau-cli"},
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
    }
    try:
        try:
            kube.create(EVENTS, event, snap.namespace)
        except ConflictError:
            update = {k: event[k] for k in ("involvedObject", "message", "lastTimestamp")}
            kube.patch(EVENTS, event_name, update, snap.namespace)
    except KubeError as error:
        say(f"warning: could not record Event {event_name}: {error.one_line()}")


def delete_workload(kube: KubeClient, namespace: str, name: str, timeout: float = 120) -> None:
    """Delete the Job/RayJob (+ headless Service) and wait until the name is free again."""
    for resource, object_name in ((RAY_JOBS, name), (JOBS, name), (SERVICES, f"{name}-headless")):
        try:
            delete(kube, resource, object_name, namespace)
        except AuthorizationError:
            if resource is not SERVICES:  # the Job owns its Service; GC removes it
                raise
        except KubeError as error:
            if not getattr(error, "resource_missing", False):
                raise
    deadline = time.monotonic() + timeout
    while True:
        snap = collect(kube, namespace, name)
        if not snap.found:
            return
        if time.monotonic() >= deadline:
            raise RuntimeFailure(
                f"deleting workload for retry: {namespace}/{name} still exists after {timeout:g}s"
            )
        wait_for_change(kube, snap, 2)


def run_retries(
    prepared: Prepared,
    policy: RetryPolicy,
    *,
    say: Callable[[str], None],
    wait: Callable[[float], None],
    poll: float = POLL_SECONDS,
) -> None:
    """`say` prints each decision and `wait` waits out each backoff; both are the CLI's, so
    the countdown a terminal shows is drawn there."""
    from tau.lifecycle.submit import submit, with_attempt

    kube, namespace, name = prepared.kube, prepared.namespace, prepared.name
    say(
        f"resilience: watching {namespace}/{name} (max {policy.max_retries} retries, "
        f"retry on: {', '.join(policy.retry_on)})"
    )
    attempt, last = 0, ""
    base_env = prepared.env
    from tau.lifecycle.submit import render_objects

    checkpoint = policy.checkpoint
    if not durable_mount(render_objects(prepared)[0], checkpoint):
        say(
            f"note: no volume is mounted at {checkpoint} (resilience.checkpoint_path), so "
            "retries restart from scratch without TAU_RESUME_FROM; mount storage under it to "
            "resume from checkpoints"
        )
        checkpoint = ""
    while True:
        snap = wait_terminal(kube, namespace, name, poll)
        if ph.primary_succeeded(snap):
            if attempt:
                emit_event(
                    kube,
                    snap,
                    f"{name}-retry-succeeded-{attempt}",
                    "RayJobRetrySucceeded",
                    f"submission_id={name} recovered_after_attempt={attempt} "
                    f"last_failure={last or 'unknown'} signature={last or 'unknown'}",
                    say,
                )
            say(f"workload {namespace}/{name} completed successfully")
            return
        cause = diagnose(snap)
        failure = cause.reason
        sig = signature(snap, failure)
        if not policy.allows(failure):
            raise RuntimeFailure(
                f"workload {namespace}/{name} failed ({failure}) — not in retry_on list "
                f"[{', '.join(policy.retry_on)}]",
                hint=f"{cause.category}: {cause.summary}; {cause.hint}"
                + ("; Unknown failures are never retried" if failure is Failure.UNKNOWN else ""),
                owner=cause.owner,
            )
        attempt += 1
        if attempt > policy.max_retries:
            emit_event(
                kube,
                snap,
                f"{name}-retries-exhausted-{policy.max_retries}",
                "RayJobRetriesExhausted",
                f"submission_id={name} retries_exhausted={policy.max_retries} "
                f"final_failure={failure} signature={sig}",
                say,
            )
            raise RuntimeFailure(
                f"workload {namespace}/{name} exhausted all {policy.max_retries} retries "
                f"(last failure: {failure}, {cause.category}: {cause.summary})",
                hint="if retries keep failing the same way, check node health with "
                "`tau cluster validate nodes`",
            )
        delay = backoff(attempt, policy.backoff_initial, policy.backoff_max)
        say(
            f"attempt {attempt}/{policy.max_retries} failed ({failure}) — retrying in "
            f"{format_duration(delay)}"
        )
        wait(delay)
        emit_event(
            kube,
            snap,
            f"{name}-retry-{attempt}",
            "RayJobAttempt",
            f"submission_id={name} attempt={attempt}/{policy.max_retries} failure={failure} "
            f"signature={sig}",
            say,
        )
        say(f"deleting failed workload {namespace}/{name}...")
        delete_workload(kube, namespace, name)
        env = retry_env(
            base_env,
            checkpoint=checkpoint,
            attempt=attempt,
            maximum=policy.max_retries,
            reason=str(failure),
        )
        try:
            submit(with_attempt(prepared, env))
        except RuntimeFailure as error:
            raise RuntimeFailure(
                f"submitting retry {attempt}/{policy.max_retries}: {error.one_line()}",
                owner=error.owner,
            ) from None
        say(f"retry {attempt}/{policy.max_retries} submitted, watching...")
        last = str(failure)

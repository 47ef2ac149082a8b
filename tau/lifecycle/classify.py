"""Failure classification (ordered rules, first match wins) and the retry arithmetic.

Whether a failed run may be retried depends only on evidence in the snapshot: an OOM kill
reproduces with the same resources, preemption and eviction are the cluster's doing, and a
failure with no recognisable evidence (`Unknown`) is never retried, so it surfaces instead
of looping.
"""

from __future__ import annotations

from enum import StrEnum

from tau.lifecycle import objects as o
from tau.lifecycle import phases as ph
from tau.lifecycle.snapshot import Snapshot


class Failure(StrEnum):
    UNKNOWN = "Unknown"
    OOM_KILLED = "OOMKilled"
    PREEMPTED = "Preempted"
    EVICTED = "Evicted"
    COMPLETED = "Completed"
    RUNNING = "Running"

    @property
    def retryable(self) -> bool:
        return self in (Failure.OOM_KILLED, Failure.PREEMPTED, Failure.EVICTED)


RETRY_ON_DEFAULT = ("Preempted", "Evicted")
SIGNATURE_LIMIT = 160


def _oom(snap: Snapshot) -> bool:
    for pod in snap.pods:
        if o.status(pod).get("reason") == "OOMKilled":
            return True
        for cs in o.container_statuses(pod, True) + o.container_statuses(pod):
            for term in (o.terminated(cs), o.last_terminated(cs)):
                if term and term.get("reason") == "OOMKilled":
                    return True
    return False


def _preempted(snap: Snapshot) -> bool:
    if any(o.is_true(pod, "DisruptionTarget") for pod in snap.pods):
        return True
    return any("preempt" in str(e.get("reason") or "").lower() for e in snap.events)


def _evicted(snap: Snapshot) -> bool:
    for pod in snap.pods:
        if o.pod_phase(pod) != "Failed":
            continue
        reasons = [str(c.get("reason") or "") for c in o.conditions(pod)]
        reasons.append(str(o.status(pod).get("reason") or ""))
        if any(r.lower() == "evicted" for r in reasons):
            return True
    return any(str(e.get("reason") or "").lower() == "evicted" for e in snap.events)


def classify(snap: Snapshot) -> Failure:
    phases = ph.build(snap)
    if ph.startup_complete(snap, phases) or ph.primary_succeeded(snap):
        return Failure.COMPLETED
    if not ph.startup_failed(snap):
        return Failure.RUNNING
    if _oom(snap):
        return Failure.OOM_KILLED
    if _preempted(snap):
        return Failure.PREEMPTED
    if _evicted(snap):
        return Failure.EVICTED
    return Failure.UNKNOWN


def signature(snap: Snapshot, failure: Failure) -> str:
    """A short, stable description of the evidence, recorded in retry Events."""
    text = ""
    st = o.status(snap.primary_rayjob)
    if st.get("message") or st.get("reason"):
        text = str(st.get("message") or st.get("reason"))
    elif snap.pods:
        pod = snap.pods[0]
        name = o.name(pod)
        statuses = o.container_statuses(pod, True) + o.container_statuses(pod)
        if failure is Failure.OOM_KILLED and _oom(snap):
            text = f"pod={name} oom_killed=true"
        else:
            cond = next((c for c in o.conditions(pod) if c.get("type") == "DisruptionTarget"), None)
            failed = next((cs for cs in statuses if o.container_failed(cs)), None)
            if cond and cond.get("status") == "True":
                text = f"pod={name} {cond.get('reason') or cond.get('type')}"
            elif failed is not None:
                term = o.terminated(failed) or {}
                why = o.waiting_reason(failed) or term.get("reason") or term.get("message") or ""
                text = f"pod={name} container={failed.get('name')} {why}"
            else:
                text = f"pod={name} {o.status(pod).get('reason') or o.pod_phase(pod)}"
    elif snap.events:
        event = snap.events[-1]
        text = f"{event.get('reason', '')} {event.get('message', '')}"
    text = " ".join((text or str(failure)).split())
    return text if len(text) <= SIGNATURE_LIMIT else text[: SIGNATURE_LIMIT - 3] + "..."


def backoff(attempt: int, initial: float, maximum: float) -> float:
    """min(initial * 2^(attempt-1), maximum) seconds for retry `attempt` (1-based)."""
    delay = initial
    for _ in range(max(0, attempt - 1)):
        delay *= 2
        if delay >= maximum:
            return maximum
    return min(delay, maximum)


def retry_env(
    env: tuple[tuple[str, str], ...], *, checkpoint: str, attempt: int, maximum: int, reason: str
) -> tuple[tuple[str, str], ...]:
    """Replace earlier TAU_RESUME_FROM / TAU_RETRY_* entries with this attempt's values."""
    from tau import keys

    dropped = set(keys.USER_SETTABLE_TAU_ENV)
    kept = [(k, v) for k, v in env if k not in dropped]
    return (
        *kept,
        (keys.ENV_RESUME_FROM, checkpoint),
        (keys.ENV_RETRY_ATTEMPT, str(attempt)),
        (keys.ENV_RETRY_MAX, str(maximum)),
        (keys.ENV_RETRY_REASON, reason),
    )


def resume_env(env: tuple[tuple[str, str], ...], checkpoint: str) -> tuple[tuple[str, str], ...]:
    from tau import keys

    kept = [(k, v) for k, v in env if k != keys.ENV_RESUME_FROM]
    return (*kept, (keys.ENV_RESUME_FROM, checkpoint))


def format_duration(seconds: float) -> str:
    """Go-style: 30s, 1m0s, 2m30s, 1h0m0s."""
    seconds = round(seconds, 3)
    if seconds < 60:
        return f"{seconds:g}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes}m{secs}s"

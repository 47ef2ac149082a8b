"""Failure classification (ordered rules, first match wins) and the retry arithmetic.

Whether a failed run may be retried depends only on evidence in the snapshot: an OOM kill
reproduces with the same resources, preemption and eviction are the cluster's doing, and a
failure with no recognisable evidence (`Unknown`) is never retried, so it surfaces instead
of looping.
"""

from __future__ import annotations

from tau.lifecycle import causes
from tau.lifecycle import objects as o
from tau.lifecycle import phases as ph
from tau.lifecycle.causes import Cause, Failure
from tau.lifecycle.snapshot import Snapshot

__all__ = ["Cause", "Failure", "classify", "diagnose"]

RETRY_ON_DEFAULT = ("Preempted", "Evicted")
SIGNATURE_LIMIT = 160

COMPLETED = Cause(Failure.COMPLETED, "completed", "", "the run completed", "")
RUNNING = Cause(Failure.RUNNING, "running", "", "the run has not failed", "")


def _rayjob_cause(snap: Snapshot) -> Cause | None:
    """A failed RayJob whose pods are gone: its own status is the evidence."""
    rayjob = snap.primary_rayjob
    if rayjob is None or not o.rayjob_failed(rayjob):
        return None
    st = o.status(rayjob)
    text = " ".join(str(st.get("message") or st.get("reason") or "").split())[:160]
    if str(st.get("jobStatus") or "").upper() == "FAILED":
        return Cause(
            Failure.UNKNOWN,
            causes.APPLICATION,
            causes.RESEARCHER,
            "the Ray driver failed" + (f": {text}" if text else ""),
            "read its output with `tau run logs`; fix the code or config, then resubmit",
        )
    return None


def diagnose(snap: Snapshot) -> Cause:
    """The one classification of a run: retry reason, category, owner and next step."""
    phases = ph.build(snap)
    if ph.startup_complete(snap, phases) or ph.primary_succeeded(snap):
        return COMPLETED
    if not ph.startup_failed(snap):
        return RUNNING
    cause = causes.snapshot_cause(snap.pods, snap.events)
    if cause.category == causes.UNKNOWN:
        return _rayjob_cause(snap) or cause
    return cause


def classify(snap: Snapshot) -> Failure:
    return diagnose(snap).reason


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
        if failure is Failure.OOM_KILLED and any(causes.oom_killed(p) for p in snap.pods):
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
    """Replace earlier TAU_RESUME_FROM / TAU_RETRY_* entries with this attempt's values; an
    empty `checkpoint` (nothing durable to resume from) sets no TAU_RESUME_FROM."""
    from tau import keys

    dropped = set(keys.USER_SETTABLE_TAU_ENV)
    kept = [(k, v) for k, v in env if k not in dropped]
    return (
        *kept,
        *(((keys.ENV_RESUME_FROM, checkpoint),) if checkpoint else ()),
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

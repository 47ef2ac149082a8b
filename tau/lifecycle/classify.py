"""Failure classification of a cluster run (ordered rules, first match wins).

Whether a failed run may be retried depends only on evidence in the snapshot: an OOM kill
reproduces with the same resources, preemption and eviction are the cluster's doing, and a
failure with no recognisable evidence (`Unknown`) is never retried, so it surfaces instead
of looping.
"""

from __future__ import annotations

from tau.lifecycle import causes
from tau.lifecycle import objects as o
from tau.lifecycle import phases as ph
from tau.lifecycle.snapshot import Snapshot
from tau.run import failures
from tau.run.failures import COMPLETED, RUNNING, Cause, Failure

SIGNATURE_LIMIT = 160


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
            failures.APPLICATION,
            failures.RESEARCHER,
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
    if cause.category == failures.UNKNOWN:
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

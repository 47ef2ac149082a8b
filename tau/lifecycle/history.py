"""`tau run history`: attempts, retries, resumes and the terminal state of one run.

Built from what the cluster keeps: the Events `tau` records on the workload (reporting
component `tau-cli`) and the current Job/RayJob with its Kueue Workload.
"""

from __future__ import annotations

from tau import keys
from tau.jsontypes import JSONObject
from tau.lifecycle import phases as ph
from tau.lifecycle.snapshot import Snapshot, event_time
from tau.lifecycle.status import failure

REASONS = {
    "RayJobAttempt": "retry",
    "RayJobRetriesExhausted": "retries exhausted",
    "RayJobRetrySucceeded": "recovered",
    "RunResumed": "resume",
}


def _fields(message: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in message.split() if "=" in part)


def history(snap: Snapshot, events: list[JSONObject]) -> JSONObject:
    entries = []
    for event in sorted(events, key=event_time):
        if (event.get("involvedObject") or {}).get("name") != snap.name:
            continue
        if event.get("reportingComponent") != "tau-cli" or event.get("reason") not in REASONS:
            continue
        fields = _fields(str(event.get("message") or ""))
        entries.append(
            {
                "time": event_time(event),
                "event": REASONS[event["reason"]],
                "attempt": fields.get("attempt") or fields.get("recovered_after_attempt", ""),
                "failure": fields.get("failure")
                or fields.get("final_failure")
                or fields.get("last_failure")
                or fields.get("resumed_after", ""),
                "message": event.get("message", ""),
            }
        )
    owner = snap.job if snap.job is not None else snap.rayjob
    meta = (owner or {}).get("metadata") or {}
    env = {}
    if snap.job is not None:
        containers = snap.job["spec"]["template"]["spec"].get("containers") or []
        env = (
            {e["name"]: e.get("value", "") for e in (containers[0].get("env") or [])}
            if containers
            else {}
        )
    return {
        "name": snap.name,
        "namespace": snap.namespace,
        "found": snap.found,
        "state": ph.state(snap),
        "displayState": ph.display_state(snap),
        "failure": failure(snap),
        "submissionId": (meta.get("annotations") or {}).get(keys.SUBMISSION_ID, ""),
        "created": meta.get("creationTimestamp", ""),
        "attempt": int(env.get(keys.ENV_RETRY_ATTEMPT) or 0) + 1,
        "resumedFrom": env.get(keys.ENV_RESUME_FROM, ""),
        "entries": entries,
    }

"""Small readers over Kubernetes obfrom tau.jsontypes import JSONObject
ject dicts (conditions, pod and container states)."""

from __future__ import annotations

from tau.jsontypes import JSONObject

PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")
START_FAILURES = (
    "CrashLoopBackOff",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "Error",
)
CREATING = ("ContainerCreating", "PodInitializing")


def conditions(obj: JSONObject | None) -> list[JSONObject]:
    return list(((obj or {}).get("status") or {}).get("conditions") or [])


def condition(obj: JSONObject | None, type_: str) -> JSONObject | None:
    return next((c for c in conditions(obj) if c.get("type") == type_), None)


def is_true(obj: JSONObject | None, type_: str) -> bool:
    cond = condition(obj, type_)
    return bool(cond and cond.get("status") == "True")


def name(obj: JSONObject) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def status(obj: JSONObject | None) -> JSONObject:
    return dict((obj or {}).get("status") or {})


# --- Jobs and RayJobs --------------------------------------------------------------------------


def job_succeeded(job: JSONObject | None) -> bool:
    return is_true(job, "Complete")


def job_failed(job: JSONObject | None) -> bool:
    return is_true(job, "Failed")


def rayjob_text(rayjob: JSONObject | None) -> list[str]:
    st = status(rayjob)
    return [
        str(st.get(key) or "").lower() for key in ("jobStatus", "jobDeploymentStatus", "reason")
    ]


def rayjob_failed(rayjob: JSONObject | None) -> bool:
    if rayjob is None:
        return False
    return any(
        word in text for text in rayjob_text(rayjob) for word in ("fail", "error", "stop", "cancel")
    )


def rayjob_succeeded(rayjob: JSONObject | None) -> bool:
    if rayjob is None or rayjob_failed(rayjob):
        return False
    job_status, deployment, _ = rayjob_text(rayjob)
    return any(
        word in text for text in (job_status, deployment) for word in ("succeed", "complete")
    )


# --- pods and containers -----------------------------------------------------------------------


def pod_phase(pod: JSONObject) -> str:
    return str(status(pod).get("phase") or "Pending")


def container_statuses(pod: JSONObject, init: bool = False) -> list[JSONObject]:
    key = "initContainerStatuses" if init else "containerStatuses"
    return list(status(pod).get(key) or [])


def waiting_reason(cs: JSONObject) -> str:
    return str(((cs.get("state") or {}).get("waiting") or {}).get("reason") or "")


def terminated(cs: JSONObject) -> JSONObject | None:
    return (cs.get("state") or {}).get("terminated")


def last_terminated(cs: JSONObject) -> JSONObject | None:
    return (cs.get("lastState") or {}).get("terminated")


def is_running(cs: JSONObject) -> bool:
    return bool((cs.get("state") or {}).get("running"))


def exit_code(cs: JSONObject) -> int | None:
    term = terminated(cs)
    return None if term is None else int(term.get("exitCode") or 0)


def container_failed(cs: JSONObject) -> bool:
    code = exit_code(cs)
    return (code is not None and code != 0) or waiting_reason(cs) in START_FAILURES + PULL_FAILURES


def pod_ready(pod: JSONObject) -> bool:
    if pod_phase(pod) == "Succeeded" or is_true(pod, "Ready"):
        return True
    statuses = container_statuses(pod)
    return bool(statuses) and all(cs.get("ready") for cs in statuses)


def pod_failed(pod: JSONObject) -> bool:
    if pod_phase(pod) == "Failed":
        return True
    return any(
        container_failed(cs) for cs in container_statuses(pod) + container_statuses(pod, True)
    )


def pod_failure_reason(pod: JSONObject) -> str:
    for cs in container_statuses(pod, True) + container_statuses(pod):
        if container_failed(cs):
            return waiting_reason(cs) or str((terminated(cs) or {}).get("reason") or "Error")
    return str(status(pod).get("reason") or pod_phase(pod))


def node_name(pod: JSONObject) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def restarts(pod: JSONObject) -> int:
    return sum(int(cs.get("restartCount") or 0) for cs in container_statuses(pod))


def pod_is_active(pod: JSONObject) -> bool:
    return pod_phase(pod) not in ("Succeeded", "Failed")

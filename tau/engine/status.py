"""A local run's RunStatus document: the cluster's JSON shape with local phases.

Phases: Submitted, Local admission, Process start, Running, then Completed or Failed.
Each attempt's process appears in `pods[]` (name `<run>-attempt-N`, node = this host), so
the cluster's human layout shows local runs unchanged.
"""

from __future__ import annotations

import os
import shlex
import socket
from typing import Any

from tau import keys
from tau.api.meta import API_VERSION
from tau.engine import procgroup, records
from tau.engine.records import Attempt, LocalRun
from tau.engine.retry import exit_cause
from tau.jsontypes import JSONObject
from tau.run.status import Phase

NAMESPACE = "local"
_NO_JOB = {
    "found": False,
    "suspended": False,
    "active": 0,
    "succeeded": 0,
    "failed": 0,
    "parallelism": 0,
    "conditions": [],
}
MANAGED_BY = keys.LOCAL_ENGINE_MANAGED_BY


def supervisor_alive(run: LocalRun) -> bool:
    """Whether the recorded supervising tau still runs (a reused pid is not it)."""
    if run.supervisor_pid is None:
        return False
    if procgroup.same_process(run.supervisor_pid, run.supervisor_stamp) is False:
        return False
    try:
        os.kill(run.supervisor_pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def effective_state(run: LocalRun) -> tuple[str, str]:
    """(state, message); a live record whose supervising tau died is failed, not running."""
    if not run.terminal and not supervisor_alive(run):
        return records.FAILED, (
            f"the supervising tau process (pid {run.supervisor_pid}) exited without finishing "
            "the record"
        )
    return run.state, run.message


def display_state(run: LocalRun) -> str:
    state, _ = effective_state(run)
    return {
        records.QUEUED: "Pending",
        records.STARTING: "Starting",
        records.RUNNING: "Running",
        records.SUCCEEDED: "Complete",
        records.FAILED: "Failed",
        records.CANCELLED: "Cancelled",
    }[state]


def phases(run: LocalRun) -> list[Phase]:
    state, message = effective_state(run)
    attempt = run.current
    found = [
        Phase("Submitted", "done", "local run record created", started_at=run.created_at),
        Phase(
            "Local admission",
            "done",
            f"{run.gpus_requested} GPU(s) requested, {run.gpus_available} available",
            started_at=run.created_at,
        ),
    ]
    if attempt is None or attempt.pid is None:
        status = "warning" if state in (records.FAILED, records.CANCELLED) else "pending"
        found.append(Phase("Process start", status, message or "waiting for the process"))
        found.append(Phase("Running", "pending", "no process"))
    else:
        count = f"attempt {attempt.number}" + (f"/{run.max_retries + 1}" if run.max_retries else "")
        found.append(
            Phase(
                "Process start",
                "done",
                f"pid {attempt.pid} started ({count})",
                started_at=attempt.started_at,
            )
        )
        found.append(_running(run, attempt, state))
    if state == records.SUCCEEDED:
        found.append(Phase("Completed", "done", "exit code 0", started_at=run.finished_at))
    elif state in (records.FAILED, records.CANCELLED):
        reason = run.reason or "Unknown"
        hint = "" if state == records.CANCELLED else f"tau logs {run.name} --tail 200"
        found.append(Phase("Failed", "warning", f"{reason}: {message}".strip(": "), hint=hint))
    else:
        found.append(Phase("Completed", "pending", "waiting for the process to exit"))
    return found


def _running(run: LocalRun, attempt: Attempt, state: str) -> Phase:
    if attempt.finished_at:
        ok = attempt.exit_code == 0
        detail = f"exited {attempt.exit_code}" + (f" ({attempt.reason})" if not ok else "")
        return Phase("Running", "done" if ok else "warning", detail, started_at=attempt.started_at)
    if state == records.FAILED:
        return Phase("Running", "warning", "process state unknown", started_at=attempt.started_at)
    return Phase("Running", "active", f"pid {attempt.pid} running", started_at=attempt.started_at)


def document(run: LocalRun) -> JSONObject:
    state, message = effective_state(run)
    phase_list = phases(run)
    failed = state in (records.FAILED, records.CANCELLED)
    attempt = run.current
    active = 1 if state == records.RUNNING else 0
    conditions = []
    if state == records.SUCCEEDED:
        conditions.append({"type": "Complete", "status": "True", "reason": "Completed"})
    elif failed:
        conditions.append(
            {"type": "Failed", "status": "True", "reason": run.reason, "message": message}
        )
    workload = {
        "found": True,
        "uid": run.name,
        "createdAt": run.created_at,
        "startedAt": run.started_at,
        "finishedAt": run.finished_at,
    }
    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "RunStatus",
        "metadata": {
            "name": run.name,
            "namespace": NAMESPACE,
            "labels": {keys.MANAGED_BY: keys.MANAGED_BY_VALUE, keys.ENGINE: "local"},
            "annotations": _annotations(run),
        },
        "status": {
            "found": True,
            "workloadKind": run.kind,
            "state": state,
            "displayState": display_state(run),
            "startupComplete": state == records.SUCCEEDED
            or all(p.status in ("done", "skipped") for p in phase_list[:3]),
            "startupFailed": failed,
        },
        "phases": [p.to_dict() for p in phase_list],
        "job": {
            **workload,
            "suspended": False,
            "active": active,
            "succeeded": 1 if state == records.SUCCEEDED else 0,
            "failed": sum(1 for a in run.attempts if a.finished_at and a.exit_code != 0),
            "parallelism": 1,
            "managedBy": MANAGED_BY,
            "conditions": conditions,
        },
        "workloads": [],
        "pods": [_process(run, a) for a in run.attempts if a.pid is not None],
        "resourceClaims": [],
        "events": [],
        "failure": _failure(run, state),
        "diagnostics": _diagnostics(run, state, message),
        "actions": _actions(run, state),
    }
    if run.kind == "RayJob":
        doc["job"] = {**dict.fromkeys(doc["job"], ""), **_NO_JOB}
        doc["rayJob"] = {
            **workload,
            "rayClusterName": "",
            "jobId": run.name,
            "jobDeploymentStatus": display_state(run),
            "jobStatus": {records.SUCCEEDED: "SUCCEEDED", records.FAILED: "FAILED"}.get(
                state, "STOPPED" if state == records.CANCELLED else "RUNNING"
            ),
            "reason": run.reason,
            "message": message,
        }
    if attempt is not None:
        doc["metadata"]["annotations"][keys.LOCAL_ATTEMPT] = str(attempt.number)
    return doc


def _failure(run: LocalRun, state: str) -> JSONObject | None:
    if state != records.FAILED:
        return None
    attempt = run.current
    return exit_cause(run.reason, attempt.exit_code if attempt else None).to_dict()


def _annotations(run: LocalRun) -> dict[str, str]:
    values = {
        keys.CONFIG_HASH: run.config_hash,
        keys.CODE_SHA: run.code_sha,
        keys.RESULT_PATH: run.output_dir,
        keys.TAU_COMMAND: run.tau_command,
    }
    return {k: v for k, v in values.items() if v}


def _process(run: LocalRun, attempt: Attempt) -> JSONObject:
    if not attempt.finished_at:
        phase = "Running" if run.state == records.RUNNING else "Unknown"
    else:
        phase = "Succeeded" if attempt.exit_code == 0 else "Failed"
    return {
        "name": f"{run.name}-attempt-{attempt.number}",
        "phase": phase,
        "node": socket.gethostname(),
        "ready": phase in ("Running", "Succeeded"),
        "restarts": 0,
        "reason": attempt.reason if phase == "Failed" else "",
        "pid": attempt.pid,
        "exitCode": attempt.exit_code,
    }


def _command(argv: list[str]) -> JSONObject:
    return {"argv": argv, "env": {}, "shell": shlex.join(argv)}


def _action(name: str, description: str, argv: list[str]) -> JSONObject:
    return {"name": name, "description": description, "command": _command(argv)}


def _actions(run: LocalRun, state: str) -> list[JSONObject]:
    logs = _action("logs", "Read the run's logs", ["tau", "logs", run.name, "--tail", "200"])
    if state == records.SUCCEEDED:
        return [logs, _action("results", "List the run's outputs", ["tau", "run", "get", run.name])]
    if state in (records.FAILED, records.CANCELLED):
        return [
            logs,
            _action(
                "resume",
                "Run it again from its checkpoint",
                ["tau", "run", "resume", run.name, "--config", run.config_path, "--local"],
            ),
        ]
    return [
        _action("watch", "Follow the logs", ["tau", "logs", run.name, "-f"]),
        _action("cancel", "Stop the run and its process tree", ["tau", "run", "cancel", run.name]),
    ]


def _diagnostics(run: LocalRun, state: str, message: str) -> list[JSONObject]:
    if state == records.FAILED:
        return [
            {
                "code": "RUN_FAILED",
                "severity": "error",
                "message": f"local run {run.name} failed ({run.reason or 'Unknown'}): {message}",
                "suggestion": f"tau logs {run.name} --tail 200",
            }
        ]
    return []


def history(run: LocalRun) -> JSONObject:
    """`tau run history` for a local run: the cluster's document, entries from the attempts.

    Attempt 1 is the submission; every later attempt is a retry (it carries the retry reason)
    or a `tau run resume`, and its failure is the reason the attempt before it ended.
    """
    state, _ = effective_state(run)
    entries = [
        {
            "time": attempt.started_at,
            "event": "retry" if attempt.retry_reason else "resume",
            "attempt": str(attempt.number),
            "failure": attempt.retry_reason or previous.reason,
            "message": "",
        }
        for previous, attempt in zip(run.attempts, run.attempts[1:], strict=False)
    ]
    return {
        "name": run.name,
        "namespace": NAMESPACE,
        "found": True,
        "state": state,
        "displayState": display_state(run),
        "submissionId": "",
        "created": run.created_at,
        "attempt": max(len(run.attempts), 1),
        "resumedFrom": "",
        "failure": _failure(run, state),
        "entries": entries,
    }

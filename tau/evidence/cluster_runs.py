"""Cluster runs in the workspace store: one run row per attempt, its provenance, its end.

A cluster run is recorded from inside the cluster, by the offload sidecar that runs beside
it with the workspace PVC mounted (the researcher's machine never writes the store). Each
submission of a run name is one attempt, identified by its submission id and stored as an
`tau.attempt` event: the first attempt's run id is the run name, a retry or resume becomes
`<name>-attempt-<N>` with the run name as its parent, so an attempt's terminal state never
has to overwrite an earlier one. A restarted sidecar finds its attempt again by the
submission id and records nothing twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tau.evidence import records
from tau.evidence.ids import check_id
from tau.evidence.store import Store, now
from tau.evidence.track import TrackRequest, track_run

ATTEMPT_EVENT = "tau.attempt"
STATUS_METRIC = "tau/run_status"
STATUS_VALUES = {"succeeded": 1.0, "failed": -1.0, "cancelled": -2.0}


@dataclass(frozen=True)
class ClusterRun:
    """What the sidecar knows about the run it serves (all from the rendered pod)."""

    name: str
    project: str
    experiment_id: str = ""
    group: str = "default"
    submission_id: str = ""
    # TAU_RETRY_ATTEMPT when the CLI retried; otherwise counted from the stored attempts.
    attempt: int | None = None
    namespace: str = ""
    workspace: str = ""
    kind: str = ""
    config_hash: str = ""
    code_sha: str = ""
    image_digest: str = ""
    tau_command: str = ""
    result_uri: str = ""
    pod: str = ""
    node: str = ""
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Attempt:
    run_id: str
    number: int
    created: bool


def attempt_run_id(name: str, number: int) -> str:
    return name if number == 0 else f"{name}-attempt-{number}"


def record_attempt(root: Path | str, run: ClusterRun) -> Attempt:
    """The attempt's run row (state `running`) and its attempt event; replay-safe."""
    check_id("run", run.name, flag="--run")
    store = Store.create(root, project=run.project, experiment_id=run.experiment_id)
    with store.mutate() as txn:
        stored = txn.db.execute(
            "SELECT run_id, payload FROM events WHERE type=? AND json_extract(payload, '$.run')=?",
            (ATTEMPT_EVENT, run.name),
        ).fetchall()
        for row in stored:
            payload = json.loads(row["payload"])
            if payload.get("submission_id", "") == run.submission_id:
                return Attempt(row["run_id"], int(payload["attempt"]), created=False)
        number = run.attempt if run.attempt is not None else len(stored)
        run_id = attempt_run_id(run.name, number)
        record = records.RunRecord(
            run_id=run_id,
            project=run.project,
            experiment_id=run.experiment_id,
            run_group_id=run.group or "default",
            parent_run_id=run.name if run_id != run.name else "",
            state="running",
            started_at=now(),
            config_hash=run.config_hash,
            code_sha=run.code_sha,
            image_digest=run.image_digest,
            tau_command=run.tau_command,
            result_uri=run.result_uri,
            context=_context(run),
            tags=_tags(run, number),
        ).resolved(store, default_state="running")
        records.upsert_run(txn, record)
        payload = {
            "run": run.name,
            "attempt": number,
            "submission_id": run.submission_id,
            "kind": run.kind,
            "namespace": run.namespace,
            "workspace": run.workspace,
            "pod": run.pod,
        }
        txn.ensure(
            "events",
            {
                "event_id": f"attempt-{run_id}-{run.submission_id or 'unsubmitted'}",
                "run_id": run_id,
                "time": record.started_at,
                "type": ATTEMPT_EVENT,
                "source": "metrics-offload",
                "severity": "info",
                "message": f"attempt {number} of {run.name} started",
                "payload": json.dumps(payload, sort_keys=True),
            },
            ["event_id"],
            compare=["run_id", "type"],
        )
    return Attempt(run_id, number, created=True)


def _context(run: ClusterRun) -> dict[str, Any]:
    context: dict[str, Any] = {"namespace": run.namespace, "node_names": run.node}
    if run.kind == "RayJob":
        context["ray_job"] = run.name
    return {key: value for key, value in context.items() if value}


def _tags(run: ClusterRun, number: int) -> dict[str, str]:
    tags = dict(run.tags)
    tags.update({"engine": "cluster", "tau.attempt": str(number)})
    if run.kind:
        tags["tau.run.kind"] = run.kind
    if run.submission_id:
        tags["tau.submission_id"] = run.submission_id
    return tags


@dataclass(frozen=True)
class Completion:
    """How the run ended, as the training container's wrapper reported it."""

    state: str
    reason: str = ""
    message: str = ""
    artifact_uri: str = ""
    checkpoint_uri: str = ""
    completed_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def value(self) -> float:
        return STATUS_VALUES[self.state]


def settle(
    root: Path | str,
    run_id: str,
    completion: Completion,
    *,
    source: str,
    tags: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Write the terminal `tau/run_status` point and the run's final state, exactly once."""
    stamp = completion.completed_at.astimezone(UTC)
    status_tags = dict(tags or {})
    status_tags.update(
        {
            "tau.status.state": completion.state,
            "tau.status.reason": completion.reason,
            "tau.status.message": completion.message,
            "tau.status.artifact_uri": completion.artifact_uri,
            "tau.status.checkpoint_uri": completion.checkpoint_uri,
        }
    )
    wall = stamp.isoformat(timespec="microseconds").replace("+00:00", "Z")
    request = TrackRequest(
        run=records.RunRecord(
            run_id=run_id,
            state=completion.state,
            completed_at=stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
            tags={k: v for k, v in status_tags.items() if v},
        ),
        metrics={STATUS_METRIC: completion.value},
        step=0,
        wall_time=wall,
        metric_source=f"{source}-status",
        idempotency_key=f"run-status-{run_id}",
    )
    return track_run(root, request)

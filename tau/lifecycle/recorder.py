"""Lifecycle observations: a Job's or RayJob's state, as `TauExpRunLifecycle` rows.

Pure functions of the objects (the owner, its Kueue Workloads, optionally its pods), so every
rule is replayed from recorded objects in unit tests:

- a newly seen object first gets a `submitted` receipt (reason `initial-observation`) that
  carries only fields fixed at creation, so it is the same row however late it is observed;
- suspended -> `queued`; a Workload Admitted -> `admitted` (with `kueue_admitted_time`);
  active pods / a Running RayJob -> `running`; Job `Complete` -> `succeeded` (even after
  retried pods) with `completion_time` from the condition; `Failed` -> `failed`, its reason
  enriched from failed pods (e.g. `BackoffLimitExceeded/OOMKilled`);
- a deletion timestamp (or a deletion) of a non-terminal run -> `cancelled`, reason
  `Deleting`; a finished run being deleted keeps its terminal state.

`observation_id` fingerprints the row without `observed_at`, `observation_id` and
`resource_version`: an unchanged relist yields the same id, so a sink stores it once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from tau import keys
from tau.jsontypes import JSONObject
from tau.lifecycle import objects as o
from tau.lifecycle import phases as ph
from tau.version import __version__

MESSAGE_LIMIT = 512
TERMINAL = ("succeeded", "failed", "cancelled")
FINGERPRINT_EXCLUDES = ("observed_at", "observation_id", "resource_version")
IDENTITY = (
    "durable_id",
    "run_id",
    "workspace_id",
    "result_scope",
    "project",
    "run_group_id",
    "tags",
    "owning_resource_kind",
    "owning_resource_name",
    "namespace",
    "cluster",
    "resource_uid",
    "submit_time",
    "created_time",
    "local_queue",
    "workload_kind",
    "image",
    "image_digest",
    "config_hash",
    "code_sha",
    "tau_command",
    "result_path",
    "result_pvc",
    "controller_version",
    "experiment_tracking",
    "experiment_source",
)


@dataclass(frozen=True)
class Scope:
    """Who is recording: the cluster and workspace stamped on every row."""

    cluster: str
    namespace: str
    workspace_id: str = ""
    result_scope: str = ""

    @property
    def workspace(self) -> str:
        return self.workspace_id or self.namespace

    @property
    def scope(self) -> str:
        return self.result_scope or self.workspace


def durable_id(cluster: str, namespace: str, uid: str, kind: str, name: str) -> str:
    """`<cluster>/<namespace>/<uid>`, or `<cluster>/<namespace>/<kind>/<name>` without a UID."""
    return f"{cluster}/{namespace}/{uid}" if uid else f"{cluster}/{namespace}/{kind}/{name}"


def fingerprint(row: JSONObject) -> str:
    kept = {k: v for k, v in sorted(row.items()) if k not in FINGERPRINT_EXCLUDES}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _truncate(text: str, limit: int = MESSAGE_LIMIT) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def _uri(value: str) -> str:
    return value if "://" in value else ""


def tracking(meta: JSONObject) -> tuple[str, str]:
    """(experiment_tracking, experiment_source): `tracked` when a metrics session records it;
    declared Stellar labels alone are `untracked` with source `declared-only`."""
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    source = annotations.get(keys.EXPERIMENT_SOURCE, "")
    if source:
        return "tracked", source
    declared = any(k.startswith(keys.STELLAR_PREFIX) for k in (*labels, *annotations))
    return "untracked", "declared-only" if declared else ""


def identity(kind: str, obj: JSONObject, scope: Scope) -> JSONObject:
    meta = obj.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    name = meta.get("name", "")
    tracked, source = tracking(meta)
    tags: dict[str, Any] = {}
    raw_tags = annotations.get(keys.STELLAR_TAGS, "")
    if raw_tags:
        try:
            tags = dict(json.loads(raw_tags))
        except (ValueError, TypeError):
            tags = {}
    created = meta.get("creationTimestamp", "")
    return {
        "durable_id": durable_id(scope.cluster, scope.namespace, meta.get("uid", ""), kind, name),
        "run_id": labels.get(keys.RUN_ID) or name,
        "workspace_id": annotations.get(keys.WORKSPACE_ID) or scope.workspace,
        "result_scope": annotations.get(keys.RESULT_SCOPE) or scope.scope,
        "project": annotations.get(keys.STELLAR_PROJECT_VALUE)
        or labels.get(keys.STELLAR_PROJECT, ""),
        "run_group_id": annotations.get(keys.STELLAR_GROUP_VALUE)
        or labels.get(keys.STELLAR_GROUP, ""),
        "tags": tags,
        "owning_resource_kind": kind,
        "owning_resource_name": name,
        "namespace": scope.namespace,
        "cluster": scope.cluster,
        "resource_uid": meta.get("uid", ""),
        "submit_time": created,
        "created_time": created,
        "local_queue": labels.get(keys.KUEUE_QUEUE_NAME, ""),
        "workload_kind": labels.get(keys.WORKLOAD_KIND, "") or kind.lower(),
        "image": annotations.get(keys.IMAGE, ""),
        "image_digest": annotations.get(keys.IMAGE_DIGEST, ""),
        "config_hash": annotations.get(keys.CONFIG_HASH, ""),
        "code_sha": annotations.get(keys.CODE_SHA, ""),
        "tau_command": annotations.get(keys.TAU_COMMAND, ""),
        "result_path": annotations.get(keys.RESULT_PATH, ""),
        "result_pvc": annotations.get(keys.RESULT_PVC, ""),
        "controller_version": __version__,
        "experiment_tracking": tracked,
        "experiment_source": source,
    }


def _admitted(workloads: list[JSONObject]) -> tuple[str, str]:
    """(admission time, ClusterQueue) of the first admitted Workload."""
    for wl in workloads:
        cond = o.condition(wl, "Admitted")
        if cond and cond.get("status") == "True":
            queue = (o.status(wl).get("admission") or {}).get("clusterQueue", "")
            return str(cond.get("lastTransitionTime") or ""), queue
    return "", ""


def _pod_reason(pods: list[JSONObject]) -> str:
    """The most telling failed-pod reason: a fatal/terminated one before a waiting one."""
    ranked = []
    for pod in pods:
        if not o.pod_failed(pod):
            continue
        reason = o.pod_failure_reason(pod)
        rank = 3 if reason in ("OOMKilled", "Evicted", "DeadlineExceeded") else 2
        if reason in o.START_FAILURES + o.PULL_FAILURES:
            rank = 1
        ranked.append((rank, reason))
    return max(ranked)[1] if ranked else ""


def current(
    kind: str, obj: JSONObject, workloads: list[JSONObject], pods: list[JSONObject]
) -> JSONObject:
    """The state fields of the object now: state, reason, message and the known times."""
    meta = obj.get("metadata") or {}
    spec, st = obj.get("spec") or {}, o.status(obj)
    admitted_at, cluster_queue = _admitted(workloads)
    fields: dict[str, Any] = {
        "generation": int(meta.get("generation") or 0),
        "kueue_admitted_time": admitted_at,
        "cluster_queue": cluster_queue,
        "pod_start_time": str(st.get("startTime") or ""),
        "completion_time": "",
        "artifact_uri": _uri((meta.get("annotations") or {}).get(keys.ARTIFACT_URI, "")),
        "checkpoint_uri": _uri((meta.get("annotations") or {}).get(keys.CHECKPOINT_URI, "")),
        "reason": "",
        "message": "",
    }
    if kind == "Job":
        done = o.condition(obj, "Complete")
        failed = o.condition(obj, "Failed")
        if done and done.get("status") == "True":
            state = "succeeded"
            fields["completion_time"] = str(done.get("lastTransitionTime") or "")
            fields["reason"] = str(done.get("reason") or "")
        elif failed and failed.get("status") == "True":
            state = "failed"
            fields["completion_time"] = str(failed.get("lastTransitionTime") or "")
            reasons = [str(failed.get("reason") or ""), _pod_reason(pods)]
            fields["reason"] = "/".join(dict.fromkeys(r for r in reasons if r))
            fields["message"] = str(failed.get("message") or "")
        elif int(st.get("active") or 0) > 0:
            state = "running"
        elif spec.get("suspend"):
            state = "queued"
        elif admitted_at:
            state = "admitted"
        else:
            state = "submitted"
    else:
        deployment = str(st.get("jobDeploymentStatus") or "")
        if o.rayjob_succeeded(obj):
            state = "succeeded"
        elif o.rayjob_failed(obj):
            state = "failed"
            fields["reason"] = str(st.get("reason") or st.get("jobStatus") or deployment)
            fields["message"] = str(st.get("message") or "")
        elif deployment == "Running":
            state = "running"
        elif deployment == "Suspended" or spec.get("suspend"):
            state = "queued"
        elif admitted_at:
            state = "admitted"
        else:
            state = "submitted"
        if state in TERMINAL:
            fields["completion_time"] = str(st.get("endTime") or "")
    if not fields["reason"] and state in ("queued", "submitted"):
        waiting = [ph.workload_reason(w) for w in workloads]
        fields["reason"] = next((r.split(":", 1)[0] for r in waiting if r), "")
    if meta.get("deletionTimestamp") and state not in TERMINAL:
        state, fields["reason"] = "cancelled", "Deleting"
        fields["completion_time"] = str(meta["deletionTimestamp"])
    fields["state"] = state
    fields["message"] = _truncate(fields["message"])
    return fields


def row(base: JSONObject, fields: JSONObject, observed_at: str, version: str) -> JSONObject:
    record = {**base, **fields, "resource_version": version, "observed_at": observed_at}
    record["observation_id"] = fingerprint(record)
    return record


def receipt(base: JSONObject, observed_at: str, version: str) -> JSONObject:
    """The `submitted` row of a newly seen run: identity only, identical whenever observed."""
    fields = {
        "generation": 0,
        "kueue_admitted_time": "",
        "cluster_queue": "",
        "pod_start_time": "",
        "completion_time": "",
        "artifact_uri": "",
        "checkpoint_uri": "",
        "state": "submitted",
        "reason": "initial-observation",
        "message": "",
    }
    return row(base, fields, observed_at, version)


def deleted(last: JSONObject, observed_at: str) -> JSONObject | None:
    """The row for a run whose object disappeared: `cancelled` unless it had finished."""
    if last.get("state") in TERMINAL:
        return None
    fields = {
        k: last.get(k, "") for k in ("kueue_admitted_time", "cluster_queue", "pod_start_time")
    }
    fields |= {
        "generation": last.get("generation") or 0,
        "completion_time": observed_at,
        "artifact_uri": last.get("artifact_uri", ""),
        "checkpoint_uri": last.get("checkpoint_uri", ""),
        "state": "cancelled",
        "reason": "Deleting",
        "message": "",
    }
    base = {k: last.get(k) for k in IDENTITY}
    return row(base, fields, observed_at, str(last.get("resource_version") or ""))

"""The labels and annotations stamped on every run workload.

They are how Kueue admits the workload (queue and priority labels), how `tau run list`
finds it (managed-by, run-id), how evidence tools correlate it (workspace, stellar keys)
and how resume knows what produced it (config hash, image, code sha, payload digests).
"""

from __future__ import annotations

import json
import re

from tau import keys
from tau.render.env import profile_dir
from tau.render.intent import RunIntent
from tau.render.meta import clean_annotations, clean_labels, label_safe, redact_command
from tau.render.placement import placement_annotations, placement_labels
from tau.render.volumes import data_claim, output_claim, storage_mounts_annotation
from tau.runconfig.durations import format_duration

_DIGEST = re.compile(r"@(sha256:[a-f0-9]{64})$")


def image_digest(image: str) -> str | None:
    match = _DIGEST.search(image)
    return match.group(1) if match else None


def capture_labels(intent: RunIntent) -> dict[str, str | None]:
    """Labels shared by the workload and its pods (no Kueue keys: those are for the owner)."""
    experiment = intent.experiment
    labels: dict[str, str | None] = {
        keys.MANAGED_BY: keys.MANAGED_BY_VALUE,
        keys.RUN_ID: intent.name,
        keys.WORKLOAD_KIND: intent.engine,
        keys.WORKSPACE: label_safe(intent.workspace) if intent.workspace else None,
        keys.STELLAR_PROJECT: label_safe(experiment.project) if experiment.project else None,
        keys.STELLAR_EXPERIMENT: (
            label_safe(experiment.experiment_id) if experiment.experiment_id else None
        ),
        keys.STELLAR_GROUP: label_safe(experiment.group) if experiment.group else None,
    }
    if intent.placement.gpu_class:
        labels[keys.GPU_CLASS] = intent.placement.gpu_class
    return labels


def workload_labels(intent: RunIntent) -> dict[str, str]:
    return clean_labels({**capture_labels(intent), **placement_labels(intent.placement)})


def pod_labels(intent: RunIntent) -> dict[str, str]:
    labels = capture_labels(intent)
    if intent.workload_identity and intent.service_account:
        labels[keys.AZURE_WORKLOAD_IDENTITY_USE] = "true"
    return clean_labels(labels)


def stellar_tags(intent: RunIntent) -> str | None:
    """Researcher tags, with platform scope keys protected from being overridden."""
    tags = dict(intent.experiment.tags)
    if intent.metrics_offload:
        tags.update(dict(intent.metrics_offload.tags))
    if intent.workspace:
        tags["tau_workspace"] = intent.workspace
        tags["tau_namespace"] = intent.namespace
    if not tags:
        return None
    return json.dumps(dict(sorted(tags.items())), separators=(",", ":"))


def workload_annotations(
    intent: RunIntent, extra: dict[str, str | None] | None = None
) -> dict[str, str]:
    provenance = intent.provenance
    experiment = intent.experiment
    annotations: dict[str, str | None] = {
        keys.CAPTURE_VERSION: keys.CAPTURE_VERSION_VALUE,
        keys.NAMESPACE: intent.namespace,
        keys.WORKSPACE_ID: intent.workspace_id,
        keys.RESULT_SCOPE: intent.result_scope,
        keys.TAU_COMMAND: redact_command(provenance.tau_command)
        if provenance.tau_command
        else None,
        keys.IMAGE: intent.image,
        keys.IMAGE_DIGEST: image_digest(intent.image),
        keys.CODE_SHA: provenance.code_sha,
        keys.CONFIG_HASH: provenance.config_hash,
        keys.SUBMISSION_ID: provenance.submission_id,
        keys.STORAGE_MOUNTS: storage_mounts_annotation(intent),
        keys.RESULT_PATH: intent.output,
        keys.RESULT_PVC: data_claim(intent) if intent.output else None,
        keys.CHECKPOINT_ARTIFACT: intent.checkpoint,
        keys.STELLAR_PROJECT_VALUE: experiment.project,
        keys.STELLAR_EXPERIMENT_ID: experiment.experiment_id,
        keys.STELLAR_GROUP_VALUE: experiment.group,
        keys.STELLAR_TAGS: stellar_tags(intent),
        **placement_annotations(intent.placement),
    }
    if intent.staged_publish:
        annotations[keys.ARTIFACT_PUBLICATION] = "staged"
        annotations[keys.ARTIFACT_PUBLICATION_ID] = intent.publication_id
    if intent.metrics_offload:
        annotations[keys.EXPERIMENT_SOURCE] = "stellar"
        annotations[keys.METRICS_SESSION_ID] = intent.metrics_offload.session_id
    gpus = intent.gpus if intent.engine == "job" else intent.gpus_per_worker * intent.workers
    if gpus > 0:
        annotations[keys.GPU_COUNT] = str(gpus * max(intent.nodes, 1))
    annotations.update(profiler_annotations(intent))
    if intent.datasets:
        annotations[keys.DATASETS] = json.dumps(
            [{"dataset": ref, "digest": digest} for ref, digest in intent.datasets],
            separators=(",", ":"),
        )
    annotations.update(extra or {})
    return clean_annotations(annotations)


def profiler_annotations(intent: RunIntent) -> dict[str, str | None]:
    """What was profiled and where its reports are, for `tau run get` and a reader of the
    workload (durations in Go form: `30s`, `1m30s`). A profiled Job is one process."""
    profiler = intent.profiler
    if profiler is None:
        return {}
    return {
        keys.PROFILER_MODE: profiler.mode,
        keys.PROFILER_PATH: profile_dir(intent),
        keys.PROFILER_PVC: output_claim(intent),
        keys.PROFILER_RANK: profiler.rank,
        keys.PROFILER_WORLD_SIZE: "1",
        keys.PROFILER_WARMUP: format_duration(profiler.warmup) if profiler.warmup else None,
        keys.PROFILER_DURATION: format_duration(profiler.duration) if profiler.duration else None,
    }


def pod_annotations(
    workload: dict[str, str], *, topology: bool, intent: RunIntent
) -> dict[str, str]:
    """The correlation subset of workload annotations, plus Kueue podset topology."""
    annotations: dict[str, str] = {
        key: value
        for key, value in workload.items()
        if key in keys.CORRELATION_ANNOTATIONS or key.startswith(keys.STELLAR_PREFIX)
    }
    if topology:
        annotations.update(dict(intent.placement.topology_annotations))
    return dict(sorted(annotations.items()))

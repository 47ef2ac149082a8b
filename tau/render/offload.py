"""The metrics offload sidecar: ships a run's metric history while it runs.

The main container waits (bounded) for the sidecar's ready file, runs the entrypoint and
writes its exit status to the done file; the sidecar then flushes and exits, so the Job
completes without a native-sidecar feature gate and the recorded status is the workload's.
"""

from __future__ import annotations

import shlex
from typing import Any

from tau.render.errors import RenderError
from tau.render.intent import MetricsOffload, RunIntent
from tau.render.volumes import METRICS_RUNTIME_PATH, METRICS_RUNTIME_VOLUME, empty_dir

CONTAINER = "metrics-offload"
READY_FILE = f"{METRICS_RUNTIME_PATH}/metrics-ready"
DONE_FILE = f"{METRICS_RUNTIME_PATH}/metrics-done"
COMPLETION_FILE = f"{METRICS_RUNTIME_PATH}/metrics-completion.json"
READY_TIMEOUT_SECONDS = 120
# Extra grace so the sidecar can flush after the main container is signalled.
SHUTDOWN_GRACE_SECONDS = READY_TIMEOUT_SECONDS


def store_path(offload: MetricsOffload) -> str:
    return f"{METRICS_RUNTIME_PATH}/metrics/{offload.session_id}/expstore"


def wrap_command(command: list[str] | None, intent: RunIntent) -> list[str]:
    if command is None:
        raise RenderError(
            "metrics.offload.enabled requires run.entrypoint so Tau can record the workload "
            "exit status",
            hint="set entrypoint in tau.yaml",
        )
    inner = shlex.join(command)
    script = (
        f"i=0; while [ ! -f {READY_FILE} ] && [ $i -lt {READY_TIMEOUT_SECONDS} ]; do "
        f"sleep 1; i=$((i+1)); done\n"
        f"[ -f {READY_FILE} ] || {{ echo 'tau: metrics offload sidecar never became ready' "
        f">&2; echo 1 > {DONE_FILE}; exit 1; }}\n"
        f"status=0; {inner} || status=$?\n"
        f'echo "$status" > {DONE_FILE}; exit "$status"\n'
    )
    return ["bash", "-c", script]


def sidecar(intent: RunIntent, offload: MetricsOffload) -> dict[str, Any]:
    experiment = intent.experiment
    args = [
        "--experiment",
        experiment.experiment_id or "",
        "--project",
        experiment.project or "",
        "--group",
        experiment.group or "default",
        "--session",
        offload.session_id,
        "--store",
        store_path(offload),
        "--out",
        offload.out,
        "--source",
        offload.source,
        "--interval",
        offload.interval,
        "--ready-file",
        READY_FILE,
        "--done-file",
        DONE_FILE,
        "--completion-file",
        COMPLETION_FILE,
        "--baseline-existing-history",
        "--status-artifact-uri",
        f"{offload.out}/status.json",
    ]
    for history in offload.history:
        args += ["--history", history]
    if offload.remote_write_endpoint:
        args += ["--remote-write-endpoint", offload.remote_write_endpoint]
    tags = dict(experiment.tags) | dict(offload.tags)
    if intent.workspace:
        tags |= {"tau_workspace": intent.workspace, "tau_namespace": intent.namespace}
    for key, value in sorted(tags.items()):
        args += ["--tag", f"{key}={value}"]
    return {
        "name": CONTAINER,
        "image": offload.image,
        "args": args,
        "volumeMounts": [{"name": METRICS_RUNTIME_VOLUME, "mountPath": METRICS_RUNTIME_PATH}],
    }


def runtime_volume() -> tuple[dict[str, Any], dict[str, Any]]:
    return empty_dir(METRICS_RUNTIME_VOLUME), {
        "name": METRICS_RUNTIME_VOLUME,
        "mountPath": METRICS_RUNTIME_PATH,
    }

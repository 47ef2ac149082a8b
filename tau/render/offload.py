"""The metrics offload sidecar: `taugrid-portal experiment offload metrics --watch` beside the run.

It tails the run's JSONL history into the workspace store on the data PVC
(`/data/.tau/expstore`) and records the attempt's provenance there, so a cluster run is in
the same store the Portal reads. Where the cluster supports native sidecars it is an init
container with `restartPolicy: Always`: started before the workload, restarted by the
kubelet if it dies (its checkpoint on the runtime volume makes that duplicate-free), and
stopped after it. Otherwise it is a second container that exits once the run is settled.
The main container's wrapper (`tau.render.wrapper`) holds the other half of the handshake.
"""

from __future__ import annotations

from tau import keys
from tau.evidence.location import WORKSPACE_STORE_PATH
from tau.jsontypes import JSONObject
from tau.render import wrapper
from tau.render.intent import MetricsOffload, RunIntent
from tau.render.meta import redact_command
from tau.render.metadata import image_digest
from tau.render.volumes import METRICS_RUNTIME_PATH, METRICS_RUNTIME_VOLUME, empty_dir

CONTAINER = "metrics-offload"
COMMAND = ["taugrid-portal", "experiment", "offload", "metrics"]
RESOURCES = {
    "requests": {"cpu": "100m", "memory": "256Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
# After SIGTERM the sidecar waits this long for the completion file, then settles the run.
SHUTDOWN_WAIT_SECONDS = 60
SHUTDOWN_GRACE_SECONDS = SHUTDOWN_WAIT_SECONDS + wrapper.HANDSHAKE_TIMEOUT_SECONDS


def _args(intent: RunIntent, offload: MetricsOffload, kind: str) -> list[str]:
    experiment = intent.experiment
    group = experiment.group or "default"
    provenance = intent.provenance
    args = [
        "--watch",
        "--out",
        offload.out,
        "--run",
        intent.name,
        "--project",
        experiment.project or "",
        "--experiment",
        experiment.experiment_id or group,
        "--group",
        group,
        "--source",
        offload.source,
        "--interval",
        offload.interval,
        "--ready-file",
        wrapper.READY_FILE,
        "--done-file",
        wrapper.DONE_FILE,
        "--completion-file",
        wrapper.COMPLETION_FILE,
        "--baseline-existing-history",
        "--shutdown-wait",
        f"{SHUTDOWN_WAIT_SECONDS}s",
        "--namespace",
        intent.namespace,
        "--kind",
        kind,
        "--config-hash",
        provenance.config_hash,
    ]
    optional = {
        "--submission-id": provenance.submission_id,
        "--attempt": dict(intent.env).get(keys.ENV_RETRY_ATTEMPT),
        "--workspace": intent.workspace,
        "--code-sha": provenance.code_sha,
        "--image-digest": image_digest(intent.image),
        "--tau-command": redact_command(provenance.tau_command) if provenance.tau_command else None,
        "--result-uri": intent.output,
    }
    for flag, value in optional.items():
        if value:
            args += [flag, value]
    for history in offload.history:
        args += ["--history", history]
    for key, value in sorted((dict(experiment.tags) | dict(offload.tags)).items()):
        args += ["--tag", f"{key}={value}"]
    return args


def sidecar(
    intent: RunIntent, offload: MetricsOffload, *, kind: str, data_mounts: list[JSONObject]
) -> JSONObject:
    container: JSONObject = {"name": CONTAINER, "image": offload.image}
    if intent.placement.image_pull_policy:
        container["imagePullPolicy"] = intent.placement.image_pull_policy
    if offload.native_sidecar:
        container["restartPolicy"] = "Always"
    container |= {
        "command": list(COMMAND),
        "args": _args(intent, offload, kind),
        "env": [
            {"name": keys.ENV_NODE_NAME, "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": keys.ENV_POD_NAME, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": keys.ENV_EXP_STORE, "value": WORKSPACE_STORE_PATH},
        ],
        "resources": {kind: dict(values) for kind, values in RESOURCES.items()},
        "volumeMounts": [
            *data_mounts,
            {"name": METRICS_RUNTIME_VOLUME, "mountPath": METRICS_RUNTIME_PATH},
        ],
    }
    return container


def place(pod: JSONObject, container: JSONObject) -> None:
    """Native sidecars go last among the init containers; others beside the workload."""
    if container.get("restartPolicy") == "Always":
        pod.setdefault("initContainers", []).append(container)
    else:
        pod["containers"].append(container)


def runtime_volume() -> tuple[JSONObject, JSONObject]:
    return empty_dir(METRICS_RUNTIME_VOLUME), {
        "name": METRICS_RUNTIME_VOLUME,
        "mountPath": METRICS_RUNTIME_PATH,
    }

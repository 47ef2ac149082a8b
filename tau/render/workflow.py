"""Managed workflow rendering: a resolved `schema_version: 1` manifest becomes its workload.

Three shapes, chosen by the manifest's workload kind:

* `rayjob`: a control-only Ray head (on the system pool, no GPUs) and one worker group. With
  GPUs (`compute.gpus` > 0) there are `compute.workers` GPU workers; CPU-only manifests count
  the head in `compute.workers`, so `workers: 5` is a 5-pod gang with 4 CPU workers;
* `rayjob-eval`: the head, one GPU worker and `eval.cpu_workers` CPU workers;
* `job`: one batch/v1 pod.

The trainer (`run.entrypoint`, or the SDK's generated wrapper) and extra scripts are shipped
as `/script/train.py` (+ extras) and a redacted copy of the manifest as `/manifest/<name>.yaml`,
each in its own digest-checked init-container payload: no ConfigMap, so the workload object
is self-contained. The driver runs `python3 /script/train.py --manifest /manifest/<name>.yaml
--smoke-pairs N`. `runtime.env_kv` adds a SecretProviderClass (Azure Key Vault through the
Secrets Store CSI driver, authenticated as the workload identity) whose synced Secret feeds
the env entries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import yaml

from tau import keys
from tau.jsontypes import JSONObject
from tau.render import driver_log
from tau.render.intent import Provenance, Resources
from tau.render.meta import clean_annotations, clean_labels, label_safe, redact_command
from tau.render.metadata import image_digest
from tau.render.names import check_namespace
from tau.render.payload import DECODER, PAYLOAD_RESOURCES, Payload, build_payload
from tau.render.placement import gpu_tolerations
from tau.render.rayjob import (
    CRITICAL_ADDONS_TOLERATION,
    HEAD_PORTS,
    SYSTEM_POOL_AFFINITY,
    TERMINATION_GRACE_SECONDS,
    TTL_AFTER_FINISHED,
    USER_BIN,
    ray_version,
    worker_probes,
)
from tau.render.security import stamp_restricted
from tau.render.volumes import HOT_VOLUME, SCRIPT_PATH, SCRIPT_VOLUME, SHM_PATH, SHM_VOLUME

DEFAULT_IMAGE = "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.56.0-cuda13.0"
MANIFEST_VOLUME = "manifest"
MANIFEST_PATH = "/manifest"
KV_VOLUME = "kv-secrets"
DATA_DIR = "/data"
HOT_DIR = "/mnt"
TRAINER = "train.py"
FINETUNES = "/data/checkpoints/finetunes"
HEAD_RESOURCES = Resources("1", "2Gi", None, None)
GPU_WORKER_RESOURCES = Resources("8", "64Gi", None, None)
CPU_WORKER_RESOURCES = Resources("1", "4Gi", None, None)


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str | None = None
    secret: tuple[str, str] | None = None  # (Secret name, key)


@dataclass(frozen=True)
class ExtraMount:
    name: str
    path: str
    claim: str
    read_only: bool = False


@dataclass(frozen=True)
class KeyVault:
    """`runtime.env_kv` resolved to one vault, its tenant and the workload identity."""

    vault: str
    tenant_id: str
    client_id: str
    entries: tuple[tuple[str, str], ...]  # (env name, secret name), sorted


@dataclass(frozen=True)
class WorkflowIntent:
    name: str  # the workload's name: <resource_naming.prefix>-<manifest name>
    manifest_name: str
    namespace: str
    kind: str  # job | rayjob | rayjob-eval
    image: str
    queue: str
    provenance: Provenance
    main_script: bytes
    manifest: bytes  # the manifest copy shipped to /manifest (secret refs redacted)
    extra_scripts: tuple[tuple[str, bytes], ...] = ()
    smoke_pairs: int = 0
    gpus: int = 1
    workers: int = 1
    cpu_workers: int = 0
    head: Resources = field(default_factory=Resources)
    worker: Resources = field(default_factory=Resources)
    pip: tuple[str, ...] = ()
    env: tuple[EnvVar, ...] = ()
    data_pvc: str | None = None
    mounts: tuple[ExtraMount, ...] = ()
    node_selector: tuple[tuple[str, str], ...] = ()
    gpu_class: str | None = None
    workload_priority_class: str | None = None
    pod_priority_class: str | None = None
    service_account: str | None = None
    workload_identity: bool = False
    key_vault: KeyVault | None = None
    upstream_checkpoint: str | None = None
    checkpoint: str | None = None
    experiment: str | None = None
    workspace: str | None = None
    workspace_id: str | None = None
    team: str | None = None
    lane: str | None = None
    # Datasets pinned from `dataset:` env references: (name@version, digest).
    datasets: tuple[tuple[str, str], ...] = ()
    # Every pod passes Pod Security `restricted` (the workspace namespace enforces it).
    restricted: bool = False

    @property
    def run_dir(self) -> str:
        return f"{FINETUNES}/{self.manifest_name}"

    @property
    def manifest_file(self) -> str:
        return f"{self.manifest_name}.yaml"

    @property
    def worker_replicas(self) -> int:
        if self.gpus == 0:
            return max(self.workers - 1, 1)
        return self.workers


def spc_name(intent: WorkflowIntent) -> str:
    return f"{intent.name}-kv"


def synced_secret(intent: WorkflowIntent) -> str:
    return f"{intent.name}-kv-sync"


def render_workflow(intent: WorkflowIntent) -> list[JSONObject]:
    """The workload first, then the SecretProviderClass it owns (if any)."""
    check_namespace(intent.namespace)
    scripts = {TRAINER: intent.main_script, **dict(intent.extra_scripts)}
    script = build_payload(scripts)
    manifest = build_payload({intent.manifest_file: intent.manifest})
    annotations = _annotations(intent, script.digest, manifest.digest)
    inits_head = [
        _payload_init(intent, "tau-script-payload", script, SCRIPT_VOLUME, SCRIPT_PATH),
        _payload_init(intent, "tau-manifest-payload", manifest, MANIFEST_VOLUME, MANIFEST_PATH),
    ]
    if intent.kind == "job":
        workload = _job(intent, annotations, inits_head)
    else:
        inits_worker = [inits_head[0]]
        workload = _rayjob(intent, annotations, inits_head, inits_worker)
    objects = [workload]
    if intent.key_vault is not None:
        objects.append(secret_provider_class(intent))
    return objects


def _labels(intent: WorkflowIntent, *, workload: bool) -> dict[str, str]:
    labels: dict[str, str | None] = {
        keys.MANAGED_BY: keys.MANAGED_BY_VALUE,
        keys.RUN_ID: intent.name,
        keys.WORKLOAD_KIND: intent.kind,
        keys.WORKSPACE: label_safe(intent.workspace) if intent.workspace else None,
        keys.EXPERIMENT: label_safe(intent.experiment) if intent.experiment else None,
        keys.TEAM: intent.team,
        keys.LANE: intent.lane,
        keys.GPU_CLASS: intent.gpu_class,
    }
    if workload:
        labels[keys.KUEUE_QUEUE_NAME] = intent.queue
        labels[keys.KUEUE_PRIORITY_CLASS] = intent.workload_priority_class
    elif intent.key_vault is not None or (intent.workload_identity and intent.service_account):
        labels[keys.AZURE_WORKLOAD_IDENTITY_USE] = "true"
    return clean_labels(labels)


def _annotations(intent: WorkflowIntent, script: str, manifest: str) -> dict[str, str]:
    provenance = intent.provenance
    return clean_annotations(
        {
            keys.CAPTURE_VERSION: keys.CAPTURE_VERSION_VALUE,
            keys.NAMESPACE: intent.namespace,
            keys.WORKSPACE_ID: intent.workspace_id,
            keys.TAU_COMMAND: redact_command(provenance.tau_command)
            if provenance.tau_command
            else None,
            keys.IMAGE: intent.image,
            keys.IMAGE_DIGEST: image_digest(intent.image),
            keys.CODE_SHA: provenance.code_sha,
            keys.CONFIG_HASH: provenance.config_hash,
            keys.SUBMISSION_ID: provenance.submission_id,
            keys.SCRIPT_PAYLOAD_DIGEST: script,
            keys.MANIFEST_PAYLOAD_DIGEST: manifest,
            keys.CHECKPOINT_ARTIFACT: intent.checkpoint,
            keys.EXPERIMENT: intent.experiment,
            keys.RESULT_PATH: intent.run_dir if intent.data_pvc else None,
            keys.RESULT_PVC: intent.data_pvc,
            keys.POD_PRIORITY_CLASS: intent.pod_priority_class,
            keys.WORKLOAD_PRIORITY_CLASS: intent.workload_priority_class,
            keys.GPU_COUNT: str(_gpu_total(intent)) if _gpu_total(intent) else None,
            keys.DATASETS: json.dumps(
                [{"dataset": ref, "digest": digest} for ref, digest in intent.datasets],
                separators=(",", ":"),
            )
            if intent.datasets
            else None,
        }
    )


def _gpu_total(intent: WorkflowIntent) -> int:
    if intent.kind == "rayjob" and intent.gpus:
        return intent.gpus * intent.workers
    return intent.gpus


def _env(intent: WorkflowIntent) -> list[JSONObject]:
    """Tau's contract first; user entries cannot replace it (the manifest rules refuse them)."""
    fixed: dict[str, str] = {
        keys.ENV_HF_HOME: "/tmp/hf",
        keys.ENV_DATA_DIR: DATA_DIR,
        keys.ENV_HOT_DIR: HOT_DIR,
        keys.ENV_METRICS_HISTORY: f"{intent.run_dir}/metrics-history.jsonl",
    }
    if intent.data_pvc:
        fixed[keys.ENV_OUTPUT_DIR] = intent.run_dir
    if intent.experiment:
        fixed[keys.ENV_EXPERIMENT] = intent.experiment
        fixed[keys.ENV_GROUP] = intent.experiment
    if intent.kind != "job":
        backend = "nccl" if intent.gpus else "gloo"
        if intent.kind == "rayjob-eval":
            world = intent.gpus
        else:
            world = intent.gpus * intent.workers if intent.gpus else intent.worker_replicas
        fixed |= {
            keys.ENV_DIST_BACKEND: backend,
            keys.ENV_NUM_WORKERS: str(world),
            keys.ENV_WORLD_SIZE: str(world),
        }
    if intent.kind == "rayjob-eval":
        fixed[keys.ENV_UPSTREAM_CHECKPOINT] = intent.upstream_checkpoint or ""
    out: list[JSONObject] = [{"name": k, "value": v} for k, v in sorted(fixed.items())]
    for entry in intent.env:
        if entry.secret is not None:
            secret, key = entry.secret
            out.append(
                {"name": entry.name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}
            )
        else:
            out.append({"name": entry.name, "value": entry.value or ""})
    if intent.key_vault is not None:
        for env_name, _ in intent.key_vault.entries:
            ref = {"name": synced_secret(intent), "key": env_name}
            out.append({"name": env_name, "valueFrom": {"secretKeyRef": ref}})
    return out


def _resources(role: Resources, default: Resources, gpus: int = 0) -> JSONObject:
    cpu = role.cpu_request or default.cpu_request
    memory = role.memory_request or default.memory_request
    out = {
        "requests": {"cpu": cpu, "memory": memory},
        "limits": {"cpu": role.cpu_limit or cpu, "memory": role.memory_limit or memory},
    }
    if gpus:
        out["requests"][keys.NVIDIA_GPU] = str(gpus)
        out["limits"][keys.NVIDIA_GPU] = str(gpus)
    return out


def _volumes(
    intent: WorkflowIntent, *, manifest: bool
) -> tuple[list[JSONObject], list[JSONObject]]:
    data: JSONObject = {"name": "data"}
    if intent.data_pvc:
        data["persistentVolumeClaim"] = {"claimName": intent.data_pvc}
    else:
        data["emptyDir"] = {}
    shm = "16Gi" if intent.gpus else "4Gi"
    volumes: list[JSONObject] = [
        {"name": SCRIPT_VOLUME, "emptyDir": {}},
        data,
        {"name": HOT_VOLUME, "emptyDir": {}},
        {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": shm}},
    ]
    mounts: list[JSONObject] = [
        {"name": SCRIPT_VOLUME, "mountPath": SCRIPT_PATH, "readOnly": True},
        {"name": "data", "mountPath": DATA_DIR},
        {"name": HOT_VOLUME, "mountPath": HOT_DIR},
        {"name": SHM_VOLUME, "mountPath": SHM_PATH},
    ]
    if manifest:
        volumes.insert(1, {"name": MANIFEST_VOLUME, "emptyDir": {}})
        mounts.insert(1, {"name": MANIFEST_VOLUME, "mountPath": MANIFEST_PATH, "readOnly": True})
    for extra in intent.mounts:
        volumes.append({"name": extra.name, "persistentVolumeClaim": {"claimName": extra.claim}})
        mount: JSONObject = {"name": extra.name, "mountPath": extra.path}
        if extra.read_only:
            mount["readOnly"] = True
        mounts.append(mount)
    if intent.key_vault is not None:
        volumes.append(
            {
                "name": KV_VOLUME,
                "csi": {
                    "driver": keys.SECRETS_STORE_DRIVER,
                    "readOnly": True,
                    "volumeAttributes": {"secretProviderClass": spc_name(intent)},
                },
            }
        )
        mounts.append({"name": KV_VOLUME, "mountPath": keys.SECRETS_STORE_MOUNT, "readOnly": True})
    return volumes, mounts


def _payload_init(
    intent: WorkflowIntent, name: str, payload: Payload, volume: str, path: str
) -> JSONObject:
    return {
        "name": name,
        "image": intent.image,
        "command": ["python3", "-c", DECODER],
        "env": [
            {"name": keys.ENV_PAYLOAD_B64, "value": payload.encoded},
            {"name": keys.ENV_PAYLOAD_DIGEST, "value": payload.digest},
            {"name": keys.ENV_PAYLOAD_TARGET_DIR, "value": path},
        ],
        "volumeMounts": [{"name": volume, "mountPath": path}],
        "resources": {k: dict(v) for k, v in PAYLOAD_RESOURCES.items()},
    }


def _pod(
    intent: WorkflowIntent,
    containers: list[JSONObject],
    inits: list[JSONObject],
    volumes: list[JSONObject],
    *,
    head: bool,
) -> JSONObject:
    spec: JSONObject = {"restartPolicy": "Never"}
    if intent.service_account:
        spec["serviceAccountName"] = intent.service_account
    spec["terminationGracePeriodSeconds"] = TERMINATION_GRACE_SECONDS
    if intent.pod_priority_class:
        spec["priorityClassName"] = intent.pod_priority_class
    if head:
        spec["affinity"] = SYSTEM_POOL_AFFINITY
        spec["tolerations"] = [dict(CRITICAL_ADDONS_TOLERATION)]
    spec["initContainers"] = inits
    spec["containers"] = containers
    spec["volumes"] = volumes
    return spec


def _secure(intent: WorkflowIntent, pod: JSONObject) -> None:
    if intent.restricted:
        stamp_restricted(pod)


def _selector(intent: WorkflowIntent) -> dict[str, str]:
    selector = dict(intent.node_selector)
    if intent.gpu_class and intent.gpu_class != "any":
        selector[keys.GPU_CLASS] = intent.gpu_class
    return dict(sorted(selector.items()))


def _metadata(intent: WorkflowIntent, annotations: dict[str, str]) -> JSONObject:
    pod = {k: v for k, v in annotations.items() if k in keys.CORRELATION_ANNOTATIONS}
    pod |= {keys.ADX_MON_SCRAPE: "true", keys.ADX_MON_PORT: "8080"}
    return {"labels": _labels(intent, workload=False), "annotations": dict(sorted(pod.items()))}


def trainer_command(intent: WorkflowIntent) -> str:
    return (
        f"python3 {SCRIPT_PATH}/{TRAINER} --manifest {MANIFEST_PATH}/{intent.manifest_file} "
        f"--smoke-pairs {intent.smoke_pairs}"
    )


def _entrypoint(intent: WorkflowIntent) -> str:
    return "\n".join(
        [
            "set -eu",
            driver_log.PREAMBLE,
            USER_BIN,
            f"cd {DATA_DIR}",
            f"exec {trainer_command(intent)}",
            "",
        ]
    )


def _worker_group(
    intent: WorkflowIntent,
    name: str,
    replicas: int,
    gpus: int,
    resources: JSONObject,
    start: dict[str, str],
    annotations: dict[str, str],
    inits: list[JSONObject],
    env: list[JSONObject],
) -> JSONObject:
    volumes, mounts = _volumes(intent, manifest=False)
    container = {
        "name": "ray-worker",
        "image": intent.image,
        "env": env,
        "resources": resources,
        "volumeMounts": mounts,
        **worker_probes(intent.image),
    }
    pod = _pod(intent, [container], inits, volumes, head=False)
    selector = _selector(intent)
    if selector:
        pod["nodeSelector"] = selector
    if gpus:
        pod["tolerations"] = gpu_tolerations()
    _secure(intent, pod)
    return {
        "groupName": name,
        "replicas": replicas,
        "minReplicas": replicas,
        "maxReplicas": replicas,
        "rayStartParams": start,
        "template": {"metadata": _metadata(intent, annotations), "spec": pod},
    }


def _rayjob(
    intent: WorkflowIntent,
    annotations: dict[str, str],
    inits_head: list[JSONObject],
    inits_worker: list[JSONObject],
) -> JSONObject:
    env = _env(intent)
    volumes, mounts = _volumes(intent, manifest=True)
    head = {
        "name": "ray-head",
        "image": intent.image,
        "env": env,
        "resources": _resources(intent.head, HEAD_RESOURCES),
        "ports": [{"name": name, "containerPort": port} for name, port in HEAD_PORTS],
        "volumeMounts": mounts,
    }
    groups = []
    if intent.kind == "rayjob-eval":
        groups.append(
            _worker_group(
                intent,
                f"{intent.name}-gpu",
                1,
                intent.gpus,
                _resources(intent.worker, GPU_WORKER_RESOURCES, intent.gpus),
                {"num-gpus": str(intent.gpus)},
                annotations,
                inits_worker,
                env,
            )
        )
        groups.append(
            _worker_group(
                intent,
                f"{intent.name}-cpu",
                intent.cpu_workers,
                0,
                _resources(intent.worker, CPU_WORKER_RESOURCES),
                {"num-gpus": "0"},
                annotations,
                inits_worker,
                env,
            )
        )
    elif intent.gpus:
        groups.append(
            _worker_group(
                intent,
                f"{intent.name}-w",
                intent.worker_replicas,
                intent.gpus,
                _resources(intent.worker, GPU_WORKER_RESOURCES, intent.gpus),
                {"num-gpus": str(intent.gpus)},
                annotations,
                inits_worker,
                env,
            )
        )
    else:
        cpu = _resources(intent.worker, CPU_WORKER_RESOURCES)
        groups.append(
            _worker_group(
                intent,
                f"{intent.name}-cpu",
                intent.worker_replicas,
                0,
                cpu,
                {"num-cpus": cpu["requests"]["cpu"], "num-gpus": "0"},
                annotations,
                inits_worker,
                env,
            )
        )
    spec: JSONObject = {
        "suspend": True,
        "shutdownAfterJobFinishes": True,
        "ttlSecondsAfterFinished": TTL_AFTER_FINISHED,
        "submissionMode": "HTTPMode",
        "entrypoint": _entrypoint(intent),
    }
    if intent.pip:
        spec["runtimeEnvYAML"] = yaml.safe_dump({"pip": list(intent.pip)}, sort_keys=False)
    head_pod = _pod(intent, [head], inits_head, volumes, head=True)
    driver_log.attach(head_pod, intent.image)
    _secure(intent, head_pod)
    spec["rayClusterSpec"] = {
        "rayVersion": ray_version(intent.image),
        "headGroupSpec": {
            "rayStartParams": {"dashboard-host": "0.0.0.0", "num-cpus": "0", "num-gpus": "0"},
            "template": {"metadata": _metadata(intent, annotations), "spec": head_pod},
        },
        "workerGroupSpecs": groups,
    }
    return {
        "apiVersion": keys.RAY_API_VERSION,
        "kind": "RayJob",
        "metadata": {
            "name": intent.name,
            "namespace": intent.namespace,
            "labels": _labels(intent, workload=True),
            "annotations": annotations,
        },
        "spec": spec,
    }


def _job(
    intent: WorkflowIntent, annotations: dict[str, str], inits: list[JSONObject]
) -> JSONObject:
    volumes, mounts = _volumes(intent, manifest=True)
    install = ""
    if intent.pip:
        import shlex

        packages = " ".join(shlex.quote(p) for p in intent.pip)
        install = (
            f"python3 -m pip install --quiet --no-cache-dir {packages} || "
            f"python3 -m pip install --quiet --no-cache-dir --user {packages}\n"
        )
    script = f"set -eu\n{install}{USER_BIN}\ncd {DATA_DIR}\nexec {trainer_command(intent)}\n"
    container = {
        "name": "main",
        "image": intent.image,
        "command": ["bash", "-c", script],
        "env": _env(intent),
        "resources": _resources(intent.head, HEAD_RESOURCES, intent.gpus),
        "volumeMounts": mounts,
    }
    pod = _pod(intent, [container], inits, volumes, head=False)
    selector = _selector(intent)
    if selector:
        pod["nodeSelector"] = selector
    if intent.gpus:
        pod["tolerations"] = gpu_tolerations()
    _secure(intent, pod)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": intent.name,
            "namespace": intent.namespace,
            "labels": _labels(intent, workload=True),
            "annotations": annotations,
        },
        "spec": {
            "suspend": True,
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": keys.DEFAULT_TTL_SECONDS,
            "template": {"metadata": _metadata(intent, annotations), "spec": pod},
        },
    }


def secret_provider_class(intent: WorkflowIntent) -> JSONObject:
    """Key Vault secrets synced into `<name>-kv-sync` for the workload identity's pods."""
    kv = intent.key_vault
    assert kv is not None
    objects = "array:\n" + "".join(
        f"  - |\n    objectName: {secret}\n    objectType: secret\n" for _, secret in kv.entries
    )
    return {
        "apiVersion": keys.SECRETS_STORE_API_VERSION,
        "kind": "SecretProviderClass",
        "metadata": {
            "name": spc_name(intent),
            "namespace": intent.namespace,
            "labels": {keys.MANAGED_BY: keys.MANAGED_BY_VALUE, keys.RUN_ID: intent.name},
        },
        "spec": {
            "provider": "azure",
            "secretObjects": [
                {
                    "secretName": synced_secret(intent),
                    "type": "Opaque",
                    "data": [{"key": env, "objectName": secret} for env, secret in kv.entries],
                }
            ],
            "parameters": {
                "usePodIdentity": "false",
                "useVMManagedIdentity": "false",
                "clientID": kv.client_id,
                "keyvaultName": kv.vault,
                "tenantId": kv.tenant_id,
                "objects": objects,
            },
        },
    }


def redact_secret_provider_class(obj: JSONObject) -> JSONObject:
    """Client dry-run: which vault secrets feed the run stays hidden; the shape stays."""
    from tau.render.meta import REDACTED

    spec = obj["spec"]
    data = [
        {**item, "objectName": REDACTED}
        for group in spec["secretObjects"]
        for item in group["data"]
    ]
    count = len(data)
    objects = "array:\n" + f"  - |\n    objectName: {REDACTED}\n    objectType: secret\n" * count
    return {
        **obj,
        "spec": {
            **spec,
            "secretObjects": [{**spec["secretObjects"][0], "data": data}],
            "parameters": {**spec["parameters"], "objects": objects},
        },
    }

"""RayJob rendering (engine `rayjob`): a CPU-only head and one GPU worker group.

The head never takes GPU work (`num-cpus: 0`, `num-gpus: 0`) and prefers the system pool,
so the expensive GPU nodes run only workers; KubeRay tears the cluster down when the job
finishes. Tau's distributed contract (`TAU_DIST_BACKEND`, `TAU_NUM_WORKERS`,
`TAU_WORLD_SIZE`) is set after user env and cannot be overridden.
"""

from __future__ import annotations

import json
import re
import shlex

import yaml

from tau import keys
from tau.jsontypes import JSONObject
from tau.render import driver_log, tune_driver, wrapper
from tau.render import offload as metrics
from tau.render.env import DATA_DIR, HOT_DIR, STAGING_ROOT, container_env
from tau.render.errors import RenderError
from tau.render.intent import Resources, RunIntent
from tau.render.metadata import (
    pod_annotations,
    pod_labels,
    workload_annotations,
    workload_labels,
)
from tau.render.names import check_namespace, check_rayjob_name
from tau.render.payload import DECODER, PAYLOAD_RESOURCES, PROJECT_FILE, Payload, build_payload
from tau.render.placement import gpu_tolerations, node_selector
from tau.render.security import apply_restricted, profile_security
from tau.render.volumes import (
    HOT_VOLUME,
    SCRIPT_PATH,
    SCRIPT_VOLUME,
    empty_dir,
    shm_volume_and_mount,
)

DEFAULT_RAY_VERSION = "2.56.0"
MAX_GPUS_PER_WORKER = 8
TTL_AFTER_FINISHED = 15
TERMINATION_GRACE_SECONDS = 600
HEALTH_PORT = 52365
_RAY_VERSION = re.compile(r"ray-?(\d+\.\d+\.\d+)")
_TAG_VERSION = re.compile(r"^(\d+\.\d+\.\d+)")

DEFAULT_RESOURCES = Resources("2", "8Gi", "4", "16Gi")
DEFAULT_GPU_WORKER_RESOURCES = Resources("8", "64Gi", "16", "128Gi")
HEAD_PORTS = (("metrics", 8080), ("gcs-server", 6379), ("dashboard", 8265), ("client", 10001))
# Soft defaults: users may replace the NCCL ones only with execution.allow_nccl_override.
RAY_DEFAULT_ENV = {
    keys.ENV_HF_HOME: "/tmp/hf",
    keys.ENV_NCCL_DEBUG: "WARN",
    keys.ENV_NCCL_SOCKET_IFNAME: "eth0",
}
SYSTEM_POOL_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": keys.AKS_NODE_MODE, "operator": "In", "values": ["system"]}
                    ]
                },
                {"matchExpressions": [{"key": keys.AKS_NODE_MODE, "operator": "DoesNotExist"}]},
            ]
        }
    }
}
CRITICAL_ADDONS_TOLERATION = {
    "key": "CriticalAddonsOnly",
    "operator": "Exists",
    "effect": "NoSchedule",
}


def ray_version(image: str) -> str:
    """`…/ray:py3.12-ray2.56.0-cuda13.0` and `rayproject/ray:2.40.0-py312-gpu` → version."""
    repository, _, tag = image.split("@", 1)[0].rpartition("/")[2].partition(":")
    match = _RAY_VERSION.search(tag)
    if match:
        return match.group(1)
    match = _TAG_VERSION.match(tag)
    if repository == "ray" and match:
        return match.group(1)
    return DEFAULT_RAY_VERSION


def render_rayjob(intent: RunIntent) -> list[JSONObject]:
    if not intent.placement.queue:
        raise RenderError(
            "render RayJob: Kueue LocalQueue is required",
            hint="set policy.queue or use a workspace that provides a LocalQueue",
        )
    check_rayjob_name(intent.name)
    check_namespace(intent.namespace)
    if intent.workers < 1:
        raise RenderError(f"compute.workers must be >= 1 (got {intent.workers})")
    if not 0 <= intent.gpus_per_worker <= MAX_GPUS_PER_WORKER:
        raise RenderError(
            f"compute.gpus_per_worker must be between 0 and {MAX_GPUS_PER_WORKER} "
            f"(got {intent.gpus_per_worker})"
        )
    for entry in intent.pip:
        if not entry or entry != entry.strip():
            raise RenderError(f"runtime.pip entry {entry!r} is blank or has surrounding spaces")
    if intent.script is None:
        raise RenderError("engine: rayjob requires run.entrypoint", hint="set entrypoint")
    if intent.profiler is not None:
        raise RenderError(
            "profiler requires engine: job; Ray starts a RayJob's worker processes itself, so "
            "Tau cannot run one of its ranks under nsys/ncu",
            hint="remove profiler, or profile the loop as an engine: job run",
        )

    if intent.project is not None:
        files = {PROJECT_FILE: intent.project.archive}
    else:
        files = {intent.script.name: intent.script.content}
    if intent.launcher == "ray-tune":
        files[tune_driver.FILENAME] = tune_driver.SOURCE.encode()
    payload = build_payload(files)
    extra: dict[str, str | None] = {keys.PAYLOAD_DIGEST: payload.digest}
    if intent.launcher_explicit:
        extra[keys.WORKLOADSPEC_EXECUTION] = json.dumps(
            {"launcher": intent.launcher}, separators=(",", ":")
        )
    annotations = workload_annotations(intent, extra)

    spec: JSONObject = {
        "suspend": True,
        "shutdownAfterJobFinishes": True,
        "ttlSecondsAfterFinished": TTL_AFTER_FINISHED,
        "submissionMode": "HTTPMode",
        "entrypoint": _entrypoint(intent),
    }
    runtime_env: JSONObject = {}
    if intent.project is not None:
        runtime_env["working_dir"] = f"file://{SCRIPT_PATH}/{PROJECT_FILE}"
    if intent.pip:
        runtime_env["pip"] = list(intent.pip)
    if runtime_env:
        spec["runtimeEnvYAML"] = yaml.safe_dump(runtime_env, sort_keys=False)
    env = ray_env(intent)
    spec["rayClusterSpec"] = {
        "rayVersion": ray_version(intent.image),
        "headGroupSpec": {
            "rayStartParams": {"dashboard-host": "0.0.0.0", "num-cpus": "0", "num-gpus": "0"},
            "template": _head_template(intent, annotations, env, payload),
        },
        "workerGroupSpecs": [
            {
                "groupName": f"{intent.name}-w",
                "replicas": intent.workers,
                "minReplicas": intent.workers,
                "maxReplicas": intent.workers,
                "rayStartParams": {"num-gpus": str(intent.gpus_per_worker)},
                "template": _worker_template(intent, annotations, env, payload),
            }
        ],
    }
    return [
        {
            "apiVersion": keys.RAY_API_VERSION,
            "kind": "RayJob",
            "metadata": {
                "name": intent.name,
                "namespace": intent.namespace,
                "labels": workload_labels(intent),
                "annotations": annotations,
            },
            "spec": spec,
        }
    ]


# Console scripts of `pip install --user` packages. `python -m site --user-base` prints the
# path but exits non-zero where user site-packages are disabled (a venv such as the runtime
# image's, another uid), which `set -e` turned into a silent exit 1 before the driver started.
USER_BIN = 'PATH="$(python3 -m site --user-base || true)/bin:$PATH"; export PATH'


def _entrypoint(intent: RunIntent) -> str:
    """Ray runs this with /bin/sh; with a project the driver starts in its working_dir."""
    assert intent.script is not None
    if intent.launcher == "ray-tune":
        run = f"python3 {SCRIPT_PATH}/{tune_driver.FILENAME}"
    elif intent.project is not None:
        run = f"python3 {shlex.quote(intent.project.entrypoint)}"
    else:
        run = f"python3 {SCRIPT_PATH}/{intent.script.name}"
    lines = [
        "set -eu",
        driver_log.PREAMBLE,
        f"if [ -f {SCRIPT_PATH}/requirements.txt ]; then",
        f"  python3 -m pip install -r {SCRIPT_PATH}/requirements.txt"
        f" || python3 -m pip install --user -r {SCRIPT_PATH}/requirements.txt",
        "fi",
        USER_BIN,
    ]
    if intent.project is None:
        lines.append(f"cd {DATA_DIR}")
    header = "\n".join([*lines, ""])
    if wrapper.needed(intent):
        return header + wrapper.script(intent, run)
    return header + f"exec {run}\n"


def ray_env(intent: RunIntent) -> dict[str, str]:
    """Head and worker env (also what the local engine exports to the Ray driver)."""
    user = {name for name, _ in intent.env} | {name for name, _ in intent.env_secret}
    for name in sorted(user):
        if name.upper() in (keys.ENV_MASTER_ADDR, keys.ENV_MASTER_PORT):
            raise RenderError(f"runtime.env.{name} is reserved (set by Ray runtime)")
        if name.upper().startswith(keys.NCCL_ENV_PREFIX) and not intent.allow_nccl_override:
            raise RenderError(
                f"runtime.env.{name}: NCCL_* keys are managed by Tau; set "
                "execution.allow_nccl_override: true to bypass"
            )
    env = {name: value for name, value in RAY_DEFAULT_ENV.items() if name not in user}
    env[keys.ENV_DATA_DIR] = DATA_DIR
    env[keys.ENV_HOT_DIR] = HOT_DIR
    if intent.placement.profile:
        env[keys.ENV_PROFILE] = intent.placement.profile
    if intent.output:
        env[keys.ENV_OUTPUT_DIR] = intent.output
    gpu = intent.gpus_per_worker > 0
    env[keys.ENV_DIST_BACKEND] = "nccl" if gpu else "gloo"
    env[keys.ENV_NUM_WORKERS] = str(intent.workers)
    env[keys.ENV_WORLD_SIZE] = str(
        intent.workers * intent.gpus_per_worker if gpu else intent.workers
    )
    configs = dict(intent.configs)
    if intent.launcher == "ray-train" and configs:
        env[keys.ENV_RAY_TRAIN_CONFIG_JSON] = json.dumps(configs, sort_keys=True)
    if intent.launcher == "ray-tune":
        if intent.tune is None:
            raise RenderError("execution.metric is required for launcher: ray-tune")
        assert intent.script is not None
        env |= {
            keys.ENV_TUNE_TRAIN_PATH: intent.project.entrypoint
            if intent.project is not None
            else f"{SCRIPT_PATH}/{intent.script.name}",
            keys.ENV_TUNE_METRIC: intent.tune.metric,
            keys.ENV_TUNE_MODE: intent.tune.mode,
            keys.ENV_TUNE_NUM_SAMPLES: str(intent.tune.num_samples),
            keys.ENV_TUNE_MAX_CONCURRENT_TRIALS: str(intent.tune.max_concurrent_trials),
            keys.ENV_TUNE_PARAM_SPACE: json.dumps(configs, sort_keys=True),
        }
    return env


def _role_resources(intent: RunIntent, role: Resources, *, gpu_worker: bool) -> JSONObject:
    base = DEFAULT_GPU_WORKER_RESOURCES if gpu_worker else DEFAULT_RESOURCES
    common = intent.resources
    requests = {
        "cpu": role.cpu_request or common.cpu_request,
        "memory": role.memory_request or common.memory_request,
    }
    limits = {
        "cpu": role.cpu_limit or common.cpu_limit,
        "memory": role.memory_limit or common.memory_limit,
    }
    defaults = {
        "requests": {"cpu": base.cpu_request, "memory": base.memory_request},
        "limits": {"cpu": base.cpu_limit, "memory": base.memory_limit},
    }
    out: dict[str, dict[str, str | None]] = {"requests": {}, "limits": {}}
    for resource in ("cpu", "memory"):
        request, limit = requests[resource], limits[resource]
        if request and not limit:
            limit = request  # a request alone also caps the pod at that size
        out["requests"][resource] = request or defaults["requests"][resource]
        out["limits"][resource] = limit or defaults["limits"][resource]
    if gpu_worker:
        out["requests"][intent.gpu_resource] = str(intent.gpus_per_worker)
        out["limits"][intent.gpu_resource] = str(intent.gpus_per_worker)
    return out


def _volumes(intent: RunIntent) -> tuple[list[JSONObject], list[JSONObject]]:
    claims = [
        volume
        for volume in intent.volumes
        if any(mount.volume == volume.name and mount.path == DATA_DIR for mount in intent.mounts)
    ]
    if claims:
        data = {"name": "data", "persistentVolumeClaim": {"claimName": claims[0].claim}}
    else:
        data = empty_dir("data")
    shm_volumes, shm_mounts = shm_volume_and_mount()
    volumes = [data, empty_dir(HOT_VOLUME), *shm_volumes, empty_dir(SCRIPT_VOLUME)]
    mounts = [
        {"name": "data", "mountPath": DATA_DIR},
        {"name": HOT_VOLUME, "mountPath": HOT_DIR},
        *shm_mounts,
        {"name": SCRIPT_VOLUME, "mountPath": SCRIPT_PATH, "readOnly": True},
    ]
    return volumes, mounts


def _payload_init(intent: RunIntent, payload: Payload) -> JSONObject:
    return {
        "name": "tau-payload",
        "image": intent.image,
        "command": ["python3", "-c", DECODER],
        "env": [
            {"name": keys.ENV_PAYLOAD_B64, "value": payload.encoded},
            {"name": keys.ENV_PAYLOAD_DIGEST, "value": payload.digest},
            {"name": keys.ENV_PAYLOAD_TARGET_DIR, "value": SCRIPT_PATH},
        ],
        "volumeMounts": [{"name": SCRIPT_VOLUME, "mountPath": SCRIPT_PATH}],
        "resources": {k: dict(v) for k, v in PAYLOAD_RESOURCES.items()},
    }


def _container(
    intent: RunIntent,
    name: str,
    env: dict[str, str],
    resources: JSONObject,
    mounts: list[JSONObject],
) -> JSONObject:
    container: JSONObject = {"name": name, "image": intent.image}
    if intent.placement.image_pull_policy:
        container["imagePullPolicy"] = intent.placement.image_pull_policy
    container["env"] = container_env(intent, env)
    container["resources"] = resources
    container["volumeMounts"] = mounts
    return container


def _pod_metadata(intent: RunIntent, annotations: dict[str, str], *, topology: bool) -> JSONObject:
    pod = pod_annotations(annotations, topology=topology, intent=intent)
    pod |= {keys.ADX_MON_SCRAPE: "true", keys.ADX_MON_PORT: "8080"}
    return {"labels": pod_labels(intent), "annotations": dict(sorted(pod.items()))}


def _pod_spec(
    intent: RunIntent,
    containers: list[JSONObject],
    inits: list[JSONObject],
    volumes: list[JSONObject],
) -> JSONObject:
    pod: JSONObject = {"restartPolicy": "Never"}
    if intent.service_account:
        pod["serviceAccountName"] = intent.service_account
    pod["terminationGracePeriodSeconds"] = TERMINATION_GRACE_SECONDS
    if intent.placement.pod_priority_class:
        pod["priorityClassName"] = intent.placement.pod_priority_class
    if inits:
        pod["initContainers"] = inits
    pod["containers"] = containers
    pod["volumes"] = volumes
    return pod


def _finish(pod: JSONObject, intent: RunIntent) -> None:
    if intent.restricted:
        apply_restricted(pod, intent.placement)
    else:
        profile_security(pod, intent.placement)


def _head_template(
    intent: RunIntent, annotations: dict[str, str], env: dict[str, str], payload: Payload
) -> JSONObject:
    """The head runs the driver (HTTPMode), so the wrapper and the offload and driver-log
    sidecars live here."""
    volumes, mounts = _volumes(intent)
    head_env = dict(env)
    if intent.staged_publish:
        head_env[keys.ENV_OUTPUT_STAGING_DIR] = f"{STAGING_ROOT}/{intent.name}"
    offload = intent.metrics_offload
    sidecar = None
    if offload is not None:
        volume, mount = metrics.runtime_volume()
        volumes.append(volume)
        data_mounts = [m for m in mounts if m["mountPath"] == DATA_DIR]
        mounts = [*mounts, mount]
        head_env.update(wrapper.handshake_env(intent))
        sidecar = metrics.sidecar(intent, offload, kind="RayJob", data_mounts=data_mounts)
    container = _container(
        intent,
        "ray-head",
        head_env,
        _role_resources(intent, intent.head_resources, gpu_worker=False),
        mounts,
    )
    container["ports"] = [{"name": name, "containerPort": port} for name, port in HEAD_PORTS]
    pod = _pod_spec(intent, [container], [_payload_init(intent, payload)], volumes)
    if sidecar is not None:
        metrics.place(pod, sidecar)
        pod["terminationGracePeriodSeconds"] += metrics.SHUTDOWN_GRACE_SECONDS
    driver_log.attach(pod, intent.image, intent.placement.image_pull_policy)
    pod["affinity"] = SYSTEM_POOL_AFFINITY
    pod["tolerations"] = [dict(CRITICAL_ADDONS_TOLERATION)]
    _finish(pod, intent)
    return {"metadata": _pod_metadata(intent, annotations, topology=False), "spec": pod}


def _worker_template(
    intent: RunIntent, annotations: dict[str, str], env: dict[str, str], payload: Payload
) -> JSONObject:
    volumes, mounts = _volumes(intent)
    gpu = intent.gpus_per_worker > 0
    container = _container(
        intent,
        "ray-worker",
        env,
        _role_resources(intent, intent.worker_resources, gpu_worker=gpu),
        mounts,
    )
    container |= worker_probes(intent.image)
    shipped = intent.launcher == "ray-tune" or intent.project is not None
    inits = [_payload_init(intent, payload)] if shipped else []
    pod = _pod_spec(intent, [container], inits, volumes)
    selector = node_selector(intent.placement, allow_clear=False)
    if selector:
        pod["nodeSelector"] = selector
    if gpu:
        pod["tolerations"] = gpu_tolerations()
    _finish(pod, intent)
    return {"metadata": _pod_metadata(intent, annotations, topology=True), "spec": pod}


def worker_probes(image: str) -> JSONObject:
    """Raylet health probes of a worker container (the path moved in Ray 2.53)."""
    major_minor = tuple(int(part) for part in ray_version(image).split(".")[:2])
    path = "/api/healthz" if major_minor >= (2, 53) else "/api/local_raylet_healthz"
    return {
        "startupProbe": {
            "httpGet": {"path": path, "port": HEALTH_PORT},
            "periodSeconds": 5,
            "timeoutSeconds": 2,
            "failureThreshold": 60,
        },
        "readinessProbe": {
            "tcpSocket": {"port": HEALTH_PORT},
            "initialDelaySeconds": 60,
            "periodSeconds": 10,
            "failureThreshold": 3,
            "timeoutSeconds": 10,
        },
        "livenessProbe": {
            "tcpSocket": {"port": HEALTH_PORT},
            "initialDelaySeconds": 60,
            "periodSeconds": 30,
            "failureThreshold": 6,
            "timeoutSeconds": 10,
        },
    }

"""batch/v1 Job rendering (engine `job`), including multi-node torchrun.

The Job is created suspended so Kueue decides when it runs; `backoffLimit: 0` because Tau
retries CLI-side with failure classification, never blindly in-cluster. Multi-node torchrun
is an Indexed Job whose pod 0 is the c10d rendezvous host behind a headless Service.
"""

from __future__ import annotations

import hashlib
import json

from tau import keys
from tau.jsontypes import JSONObject
from tau.render import command as cmd
from tau.render import offload as metrics
from tau.render import wrapper
from tau.render.env import check_payload_value, container_env, profiler_env, storage_env
from tau.render.errors import RenderError
from tau.render.intent import Resources, RunIntent
from tau.render.metadata import (
    image_digest,
    pod_annotations,
    pod_labels,
    workload_annotations,
    workload_labels,
)
from tau.render.names import check_job_name, check_namespace, headless_service_name
from tau.render.placement import apply_scheduling
from tau.render.security import apply_restricted, profile_security
from tau.render.volumes import (
    PROJECT_MOUNT_PATH,
    SOURCE_MOUNT_PATH,
    hot_volume_and_mount,
    image_assets,
    output_claim,
    project_staging,
    pvc_volumes,
    shm_volume_and_mount,
    source_staging,
    user_mounts,
)

MAIN = "main"
TERMINATION_GRACE_SECONDS = 600
TORCHRUN_RESERVED = (keys.ENV_MASTER_ADDR, keys.ENV_MASTER_PORT)


def render_job(intent: RunIntent) -> list[JSONObject]:
    """The Job, preceded by its headless Service when it spans several nodes."""
    if not intent.placement.queue:
        raise RenderError(
            "render suspended Job: Kueue LocalQueue is required",
            hint="set policy.queue or use a workspace that provides a LocalQueue",
        )
    check_job_name(intent.name, indexed=intent.multi_node)
    check_namespace(intent.namespace)
    check_profiler(intent)
    annotations = workload_annotations(intent, _job_annotations(intent))
    job: JSONObject = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": intent.name,
            "namespace": intent.namespace,
            "labels": workload_labels(intent),
            "annotations": annotations,
        },
        "spec": _job_spec(intent, annotations),
    }
    if not intent.multi_node:
        return [job]
    return [_headless_service(intent), job]


def _job_annotations(intent: RunIntent) -> dict[str, str | None]:
    """Payload digests (script content is not in the config hash) and torchrun topology."""
    annotations: dict[str, str | None] = {}
    if intent.project is not None:
        annotations[keys.SCRIPT_PAYLOAD_DIGEST] = hashlib.sha256(intent.project.archive).hexdigest()
    elif intent.script is not None and intent.source is None:
        annotations[keys.SCRIPT_PAYLOAD_DIGEST] = hashlib.sha256(intent.script.content).hexdigest()
    if intent.source is not None:
        annotations[keys.SOURCE_PAYLOAD_DIGEST] = image_digest(intent.source.image)
    if intent.launcher != "torchrun":
        return annotations
    spec = {
        "launcher": "torchrun",
        "processes_per_node": max(intent.processes_per_node, 1),
        "nodes": intent.nodes,
    }
    annotations[keys.WORKLOADSPEC_EXECUTION] = json.dumps(spec, separators=(",", ":"))
    return annotations


def _job_spec(intent: RunIntent, annotations: dict[str, str]) -> JSONObject:
    spec: JSONObject = {
        "suspend": True,
        "backoffLimit": 0,
        "ttlSecondsAfterFinished": intent.ttl_seconds_after_finished,
    }
    if intent.placement.active_deadline_seconds:
        spec["activeDeadlineSeconds"] = intent.placement.active_deadline_seconds
    if intent.multi_node:
        spec |= {
            "completionMode": "Indexed",
            "completions": intent.nodes,
            "parallelism": intent.nodes,
        }
    spec["template"] = {
        "metadata": {
            "labels": pod_labels(intent),
            "annotations": pod_annotations(annotations, topology=True, intent=intent),
        },
        "spec": _pod_spec(intent),
    }
    if not spec["template"]["metadata"]["annotations"]:
        del spec["template"]["metadata"]["annotations"]
    return spec


def _pod_spec(intent: RunIntent) -> JSONObject:
    torchrun = intent.launcher == "torchrun"
    distributed = torchrun and (intent.multi_node or intent.processes_per_node > 1)
    volumes = pvc_volumes(intent)
    mounts = user_mounts(intent)
    hot_volumes, hot_mounts = hot_volume_and_mount(intent)
    volumes += hot_volumes
    mounts += hot_mounts
    if distributed:
        shm_volumes, shm_mounts = shm_volume_and_mount()
        volumes += shm_volumes
        mounts += shm_mounts
    init_containers, asset_volumes, asset_mounts = image_assets(intent)
    volumes += asset_volumes
    mounts += asset_mounts
    if intent.source is not None:
        init, volume, mount = source_staging(intent.source, intent.source_entrypoint or "")
        init_containers.insert(0, init)
        volumes.append(volume)
        mounts.append(mount)
    if intent.project is not None:
        init, volume, mount = project_staging(intent)
        init_containers.insert(0, init)
        volumes.append(volume)
        mounts.append(mount)

    command = cmd.job_command(intent)
    if command is not None:
        command = wrapper.profiled(intent, command)
    grace = TERMINATION_GRACE_SECONDS
    if wrapper.needed(intent):
        if command is None:
            field = "metrics.offload.enabled" if intent.metrics_offload else "storage.publish"
            raise RenderError(
                f"{field} requires run.entrypoint: Tau wraps the entrypoint to record its exit "
                "status and publish outputs, and cannot wrap the image's own command",
                hint="set entrypoint in tau.yaml",
            )
        command = wrapper.wrap_command(intent, command)
    sidecar = None
    if intent.metrics_offload is not None:
        volume, mount = metrics.runtime_volume()
        volumes.append(volume)
        mounts.append(mount)
        sidecar = metrics.sidecar(
            intent, intent.metrics_offload, kind="Job", data_mounts=user_mounts(intent)
        )
        grace += metrics.SHUTDOWN_GRACE_SECONDS

    main: JSONObject = {"name": MAIN, "image": intent.image}
    if intent.placement.image_pull_policy:
        main["imagePullPolicy"] = intent.placement.image_pull_policy
    if command is not None:
        main["command"] = command
    main["env"] = container_env(
        intent,
        managed_env(intent),
        reserved=_reserved(intent),
        reserved_reason="is managed by torchrun",
    )
    resources = _resources(intent.resources, intent.gpus)
    if resources:
        main["resources"] = resources
    if mounts:
        main["volumeMounts"] = mounts
    working_dir = _working_dir(intent)
    if working_dir:
        main["workingDir"] = working_dir

    pod: JSONObject = {"restartPolicy": "Never"}
    if intent.service_account:
        pod["serviceAccountName"] = intent.service_account
    if intent.multi_node:
        pod["subdomain"] = headless_service_name(intent.name)
    pod["terminationGracePeriodSeconds"] = grace
    apply_scheduling(pod, intent.placement, gpus=intent.gpus)
    if init_containers:
        pod["initContainers"] = init_containers
    pod["containers"] = [main]
    if sidecar is not None:
        metrics.place(pod, sidecar)
    if volumes:
        pod["volumes"] = volumes
    if intent.restricted:
        apply_restricted(pod, intent.placement)
    else:
        profile_security(pod, intent.placement)
    return pod


def check_profiler(intent: RunIntent) -> None:
    """The profiler needs a command to wrap and a PVC to keep its reports past the pod."""
    if intent.profiler is None:
        return
    if intent.script is None and intent.source is None and intent.project is None:
        raise RenderError(
            "profiler requires run.entrypoint: Tau runs the entrypoint under the profiler and "
            "cannot wrap the image's own command",
            hint="set entrypoint in tau.yaml",
        )
    if output_claim(intent) is None:
        raise RenderError(
            f"profiler requires durable PVC output; storage.output {intent.output or '(unset)'} "
            "is not on a writable PVC mount",
            hint="set storage.data_pvc, or storage.output under a PVC mount",
        )


def _reserved(intent: RunIntent) -> tuple[str, ...]:
    if intent.launcher != "torchrun":
        return ()
    if intent.multi_node:
        return (*TORCHRUN_RESERVED, keys.ENV_JOB_COMPLETION_INDEX)
    return TORCHRUN_RESERVED


def managed_env(intent: RunIntent) -> dict[str, str]:
    """Tau-managed env of the main container (also what the local engine exports)."""
    env = storage_env(intent)
    script = cmd.script_env(intent)
    for name, value in script.items():
        check_payload_value(name, value)
    env.update(script)
    if intent.launcher == "torchrun":
        master = (
            f"{intent.name}-0.{headless_service_name(intent.name)}"
            if intent.multi_node
            else "localhost"
        )
        env[keys.ENV_MASTER_ADDR] = master
        env[keys.ENV_MASTER_PORT] = str(cmd.C10D_PORT)
        if intent.multi_node or intent.processes_per_node > 1:
            env[keys.ENV_OMP_NUM_THREADS] = "1"
    env.update(profiler_env(intent))
    env.update(wrapper.handshake_env(intent))
    return env


def _resources(resources: Resources, gpus: int) -> dict[str, dict[str, str]]:
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if resources.cpu_request:
        requests["cpu"] = resources.cpu_request
    if resources.memory_request:
        requests["memory"] = resources.memory_request
    if resources.cpu_limit:
        limits["cpu"] = resources.cpu_limit
    if resources.memory_limit:
        limits["memory"] = resources.memory_limit
    if gpus > 0:
        requests[keys.NVIDIA_GPU] = str(gpus)
        limits[keys.NVIDIA_GPU] = str(gpus)
    out = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def _working_dir(intent: RunIntent) -> str | None:
    if intent.working_dir:
        return intent.working_dir
    if intent.source is not None:
        return SOURCE_MOUNT_PATH
    if intent.project is not None:
        return PROJECT_MOUNT_PATH
    if intent.data_mounted:
        return "/data"
    return None


def _headless_service(intent: RunIntent) -> JSONObject:
    metadata: JSONObject = {
        "name": headless_service_name(intent.name),
        "namespace": intent.namespace,
        "labels": {keys.MANAGED_BY: keys.MANAGED_BY_VALUE, keys.RUN_ID: intent.name},
    }
    if intent.provenance.submission_id:
        metadata["annotations"] = {keys.SUBMISSION_ID: intent.provenance.submission_id}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata,
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": {keys.JOB_NAME_LABEL: intent.name},
            "ports": [{"name": "c10d", "port": cmd.C10D_PORT, "protocol": "TCP"}],
        },
    }

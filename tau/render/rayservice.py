"""RayService rendering (`tau serve deploy --kind rayservice`): a Ray Serve application.

KubeRay deploys `serveConfigV2` onto the cluster it creates and reports application health
from the Ray dashboard. A single-node service serves from the head; a multi-node service
keeps the head CPU-only on the system pool (`num-cpus: 0`, `num-gpus: 0`) so Serve
replicas land only on the GPU workers, one worker per host.
"""

from __future__ import annotations

import yaml

from tau import keys
from tau.jsontypes import JSONObject
from tau.render.endpoint import (
    FLAGS,
    ServeIntent,
    check_name,
    container_env,
    managed_env,
    pod_labels,
    require_queue,
    resources,
    secure,
    service_annotations,
    service_labels,
    volumes_and_mounts,
)
from tau.render.errors import RenderError
from tau.render.placement import gpu_tolerations, node_selector
from tau.render.rayjob import CRITICAL_ADDONS_TOLERATION, SYSTEM_POOL_AFFINITY

# KubeRay's limit: its RayClusters are named `<name>-<5 random>` and may have 53 characters.
RAYSERVICE_NAME_MAX = 47
DASHBOARD_PORT = 8265
GCS_PORT = 6379
WORKER_GROUP = "gpu-workers"
APPLICATION = "default"
# The Serve deployment that --replicas and autoscaling configure.
SERVE_DEPLOYMENT = "default"
HEAD_RESOURCES = {
    "requests": {"cpu": "1", "memory": "2Gi"},
    "limits": {"cpu": "2", "memory": "4Gi"},
}
WORKER_DEFAULTS = {"cpu": "1", "memory": "8Gi"}
SHAPE_ENV = frozenset({keys.ENV_SERVE_NODES, keys.ENV_SERVE_GPUS_PER_NODE})


def render_rayservice(intent: ServeIntent) -> list[JSONObject]:
    require_queue(intent, "RayService")
    check_name(intent, limit=RAYSERVICE_NAME_MAX)
    for index, entry in enumerate(intent.pip):
        if not entry.strip():
            raise RenderError(f"runtime.pip[{index}]: blank entry", owner=FLAGS)
    env = serve_env(intent)
    cluster: JSONObject = {"rayVersion": intent.ray_version}
    if intent.multi_node:
        cluster["headGroupSpec"] = _multi_node_head(intent, env)
        cluster["workerGroupSpecs"] = [_worker_group(intent, env)]
    else:
        cluster["headGroupSpec"] = _single_node_head(intent, env)
    return [
        {
            "apiVersion": keys.RAY_API_VERSION,
            "kind": "RayService",
            "metadata": {
                "name": intent.name,
                "namespace": intent.namespace,
                "labels": service_labels(intent),
                "annotations": service_annotations(intent),
            },
            "spec": {"serveConfigV2": serve_config(intent, env), "rayClusterConfig": cluster},
        }
    ]


def serve_env(intent: ServeIntent) -> dict[str, str]:
    """Managed env; multi-node adds the profile's shape, which a user may only repeat."""
    env = managed_env(intent)
    if not intent.multi_node:
        return env
    shape = {
        keys.ENV_SERVE_NODES: str(intent.nodes),
        keys.ENV_SERVE_GPUS_PER_NODE: str(intent.gpus),
    }
    for name, value in intent.env:
        if name in SHAPE_ENV and value != shape.get(name):
            raise RenderError(
                f'{name} is supplied by the workload profile and must be "{shape[name]}"',
                hint=f"remove --env {name}",
                owner=FLAGS,
            )
    return env | shape


def serve_config(intent: ServeIntent, env: dict[str, str]) -> str:
    """`serveConfigV2`: one application at `/`; secrets never enter this plain-text field."""
    app: JSONObject = {
        "name": APPLICATION,
        "route_prefix": "/",
        "import_path": intent.import_path,
    }
    if intent.app_args is not None:
        app["args"] = intent.app_args
    runtime_env: JSONObject = {}
    if intent.pip:
        runtime_env["pip"] = list(intent.pip)
    env_vars = {**env, **dict(intent.env)}
    if env_vars:
        runtime_env["env_vars"] = dict(sorted(env_vars.items()))
    if runtime_env:
        app["runtime_env"] = runtime_env
    scaling = intent.autoscaling
    if scaling is not None:
        app["deployments"] = [
            {
                "name": SERVE_DEPLOYMENT,
                "autoscaling_config": {
                    "min_replicas": scaling.min_replicas,
                    "max_replicas": scaling.max_replicas,
                    "target_num_ongoing_requests_per_replica": scaling.target_qps,
                    "downscale_delay_s": scaling.scale_down_delay,
                },
            }
        ]
    elif intent.replicas is not None:
        app["deployments"] = [{"name": SERVE_DEPLOYMENT, "num_replicas": intent.replicas}]
    config = {
        "http_options": {"host": "0.0.0.0", "port": intent.port},
        "applications": [app],
    }
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False)


def _container(
    intent: ServeIntent, name: str, env: dict[str, str], mounts: list[JSONObject]
) -> JSONObject:
    container: JSONObject = {"name": name, "image": intent.image}
    if intent.placement.image_pull_policy:
        container["imagePullPolicy"] = intent.placement.image_pull_policy
    repeatable = SHAPE_ENV if intent.multi_node else frozenset()
    container["env"] = container_env(intent, env, repeatable=repeatable)
    if mounts:
        container["volumeMounts"] = mounts
    return container


def _pod_metadata(intent: ServeIntent, *, topology: bool) -> JSONObject:
    metadata: JSONObject = {"labels": pod_labels(intent)}
    if topology and intent.placement.topology_annotations:
        metadata["annotations"] = dict(sorted(intent.placement.topology_annotations))
    return metadata


def _gpu_scheduling(intent: ServeIntent, pod: JSONObject) -> None:
    if intent.placement.pod_priority_class:
        pod["priorityClassName"] = intent.placement.pod_priority_class
    selector = node_selector(intent.placement, allow_clear=False)
    if selector:
        pod["nodeSelector"] = selector
    if intent.gpus > 0:
        pod["tolerations"] = gpu_tolerations()


def _single_node_head(intent: ServeIntent, env: dict[str, str]) -> JSONObject:
    volumes, mounts = volumes_and_mounts(intent)
    container = _container(intent, "ray-head", env, mounts)
    if intent.args:
        container["args"] = list(intent.args)
    container["ports"] = [
        {"name": "serve", "containerPort": intent.port},
        {"name": "dashboard", "containerPort": DASHBOARD_PORT},
    ]
    limits = resources(intent, gpus=intent.gpus)
    if limits:
        container["resources"] = limits
    pod: JSONObject = {}
    _gpu_scheduling(intent, pod)
    pod["containers"] = [container]
    if volumes:
        pod["volumes"] = volumes
    secure(intent, pod)
    return {
        "rayStartParams": {"dashboard-host": "0.0.0.0"},
        "template": {"metadata": _pod_metadata(intent, topology=True), "spec": pod},
    }


def _multi_node_head(intent: ServeIntent, env: dict[str, str]) -> JSONObject:
    volumes, mounts = volumes_and_mounts(intent)
    container = _container(intent, "ray-head", env, mounts)
    container["ports"] = [
        {"name": "serve", "containerPort": intent.port},
        {"name": "dashboard", "containerPort": DASHBOARD_PORT},
        {"name": "gcs-server", "containerPort": GCS_PORT},
    ]
    container["resources"] = {kind: dict(values) for kind, values in HEAD_RESOURCES.items()}
    pod: JSONObject = {}
    if intent.placement.pod_priority_class:
        pod["priorityClassName"] = intent.placement.pod_priority_class
    pod["affinity"] = SYSTEM_POOL_AFFINITY
    pod["tolerations"] = [dict(CRITICAL_ADDONS_TOLERATION)]
    pod["containers"] = [container]
    if volumes:
        pod["volumes"] = volumes
    secure(intent, pod)
    return {
        "rayStartParams": {"dashboard-host": "0.0.0.0", "num-cpus": "0", "num-gpus": "0"},
        "template": {"metadata": _pod_metadata(intent, topology=False), "spec": pod},
    }


def _worker_group(intent: ServeIntent, env: dict[str, str]) -> JSONObject:
    volumes, mounts = volumes_and_mounts(intent)
    container = _container(intent, "ray-worker", env, mounts)
    worker = resources(intent, gpus=intent.gpus)
    requests = worker.setdefault("requests", {})
    for resource, default in WORKER_DEFAULTS.items():
        requests.setdefault(resource, default)
    worker["requests"] = dict(sorted(requests.items()))
    container["resources"] = worker
    pod: JSONObject = {}
    _gpu_scheduling(intent, pod)
    pod["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchLabels": {
                            keys.RAY_NODE_TYPE: "worker",
                            keys.SERVICE: intent.name,
                        }
                    },
                    "matchLabelKeys": [keys.RAY_CLUSTER],
                    "topologyKey": keys.HOSTNAME_LABEL,
                }
            ]
        }
    }
    pod["containers"] = [container]
    if volumes:
        pod["volumes"] = volumes
    secure(intent, pod)
    return {
        "groupName": WORKER_GROUP,
        "replicas": intent.nodes,
        "minReplicas": intent.nodes,
        "maxReplicas": intent.nodes,
        "rayStartParams": {"num-gpus": str(intent.gpus)},
        "template": {"metadata": _pod_metadata(intent, topology=True), "spec": pod},
    }

"""Deployment rendering (`tau serve deploy --kind deployment`): a plain HTTP server.

Kueue admits each pod through its pod integration with the Deployment as the suspending
parent, so a Deployment is either admitted whole or not at all. `Recreate` keeps a rollout
from holding two generations of GPU pods at once. An optional ClusterIP Service fronts the
pods and an optional HorizontalPodAutoscaler owns the replica count.
"""

from __future__ import annotations

from tau import keys
from tau.jsontypes import JSONObject
from tau.render.endpoint import (
    FLAGS,
    ServeIntent,
    check_name,
    container_env,
    extra_containers,
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

MAIN = "main"
CPU_UTILIZATION = 80
QPS_METRIC = "http_requests_per_second"


def render_deployment(intent: ServeIntent) -> list[JSONObject]:
    """The Deployment, then its Service and HPA when asked for (creation order)."""
    require_queue(intent, "Kueue-managed Deployment")
    check_name(intent)
    app = {keys.APP_LABEL: intent.name}
    labels = {**app, **service_labels(intent)}
    spec: JSONObject = {}
    if intent.autoscaling is None:
        spec["replicas"] = 1 if intent.replicas is None else intent.replicas
    spec |= {
        "strategy": {"type": "Recreate"},
        "selector": {"matchLabels": dict(app)},
        "template": _pod_template(intent, app),
    }
    objects = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": intent.name,
                "namespace": intent.namespace,
                "labels": labels,
                "annotations": service_annotations(intent),
            },
            "spec": spec,
        }
    ]
    if intent.service_port > 0:
        objects.append(_service(intent, app))
    if intent.autoscaling is not None:
        objects.append(_autoscaler(intent, app))
    return objects


def _owned_metadata(intent: ServeIntent, app: dict[str, str]) -> JSONObject:
    return {
        "name": intent.name,
        "namespace": intent.namespace,
        "labels": {**app, keys.MANAGED_BY: keys.MANAGED_BY_VALUE, keys.SERVICE: intent.name},
    }


def _pod_template(intent: ServeIntent, app: dict[str, str]) -> JSONObject:
    placement = intent.placement
    labels = {
        **app,
        **pod_labels(intent),
        keys.KUEUE_QUEUE_NAME: placement.queue,
        keys.KUEUE_MANAGED: "true",
    }
    if placement.workload_priority_class:
        labels[keys.KUEUE_PRIORITY_CLASS] = placement.workload_priority_class
    annotations = {
        keys.KUEUE_POD_SUSPENDING_PARENT: "deployment",
        **dict(placement.topology_annotations),
    }
    volumes, mounts = volumes_and_mounts(intent)
    user_mounts = [m for m in mounts if m["name"] in {v.name for v in intent.volumes}]
    pod: JSONObject = {}
    if placement.pod_priority_class:
        pod["priorityClassName"] = placement.pod_priority_class
    selector = node_selector(placement)
    if selector:
        pod["nodeSelector"] = selector
    if intent.gpus > 0:
        pod["tolerations"] = gpu_tolerations()
    inits = extra_containers(intent.init_containers)
    sidecars = extra_containers(intent.sidecars)
    for container in (*inits, *sidecars):
        if user_mounts:
            container["volumeMounts"] = [dict(m) for m in user_mounts]
    if inits:
        pod["initContainers"] = inits
    pod["containers"] = [_main(intent, mounts), *sidecars]
    if volumes:
        pod["volumes"] = volumes
    secure(intent, pod)
    return {
        "metadata": {"labels": dict(sorted(labels.items())), "annotations": annotations},
        "spec": pod,
    }


def _main(intent: ServeIntent, mounts: list[JSONObject]) -> JSONObject:
    container: JSONObject = {"name": MAIN, "image": intent.image}
    if intent.placement.image_pull_policy:
        container["imagePullPolicy"] = intent.placement.image_pull_policy
    if intent.command:
        container["command"] = list(intent.command)
    if intent.args:
        container["args"] = list(intent.args)
    if intent.deployment_ports:
        container["ports"] = [
            {"containerPort": port, "protocol": "TCP"} for port in intent.deployment_ports
        ]
    container["env"] = container_env(intent, managed_env(intent))
    limits = resources(intent, gpus=intent.gpus)
    if limits:
        container["resources"] = limits
    container |= _probes(intent)
    if mounts:
        container["volumeMounts"] = mounts
    return container


def probe_port(intent: ServeIntent) -> int:
    """The port the container answers probes on: what the Service targets, else what the
    container declares, else the Service port itself."""
    for port in (
        intent.service_target_port,
        intent.deployment_ports[0] if intent.deployment_ports else 0,
        intent.service_port,
    ):
        if port > 0:
            return port
    return 0


def _probes(intent: ServeIntent) -> JSONObject:
    probes = intent.probes
    if not probes.any:
        return {}
    port = probe_port(intent)
    if port == 0:
        raise RenderError(
            "a probe path needs a port: set --service-port, --service-target-port or"
            " --deployment-port",
            owner=FLAGS,
        )
    out: JSONObject = {}
    for key, path, flag in (
        ("readinessProbe", probes.readiness, "--readiness-path"),
        ("startupProbe", probes.startup, "--startup-path"),
        ("livenessProbe", probes.liveness, "--liveness-path"),
    ):
        if not path:
            continue
        if not path.startswith("/"):
            raise RenderError(f"{flag} {path!r} must start with '/'", owner=FLAGS)
        probe: JSONObject = {"httpGet": {"path": path, "port": port}}
        if key == "startupProbe" and probes.startup_failure_threshold:
            probe["failureThreshold"] = probes.startup_failure_threshold
        out[key] = probe
    return out


def _service(intent: ServeIntent, app: dict[str, str]) -> JSONObject:
    target = intent.service_target_port or (
        intent.deployment_ports[0] if intent.deployment_ports else intent.service_port
    )
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _owned_metadata(intent, app),
        "spec": {
            "type": "ClusterIP",
            "selector": dict(app),
            "ports": [
                {
                    "name": "http",
                    "port": intent.service_port,
                    "targetPort": target,
                    "protocol": "TCP",
                }
            ],
        },
    }


def _autoscaler(intent: ServeIntent, app: dict[str, str]) -> JSONObject:
    scaling = intent.autoscaling
    assert scaling is not None
    metrics: list[JSONObject] = [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": CPU_UTILIZATION},
            },
        }
    ]
    if scaling.target_qps > 0:
        metrics.append(
            {
                "type": "Pods",
                "pods": {
                    "metric": {"name": QPS_METRIC},
                    "target": {"type": "AverageValue", "averageValue": str(scaling.target_qps)},
                },
            }
        )
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _owned_metadata(intent, app),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": intent.name},
            "minReplicas": scaling.min_replicas,
            "maxReplicas": scaling.max_replicas,
            "metrics": metrics,
            "behavior": {
                "scaleDown": {"stabilizationWindowSeconds": scaling.scale_down_delay},
            },
        },
    }

"""`tau serve status | scale | delete`: reading, resizing and removing an endpoint.

Status is a plain record (the `-o json|yaml` contract); the table is only its view. Scale
goes through the Deployment's `scale` subresource; a RayService keeps its replica count in
the serialized Serve config, so it is resized by redeploying. Delete is idempotent and
touches only objects `tau serve` created.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tau import safeyaml
from tau.errors import RuntimeFailure, UsageError
from tau.kube.resources import DEPLOYMENTS, HORIZONTAL_POD_AUTOSCALERS, SERVICES
from tau.serving.kinds import KIND_RESOURCES, owned_by_serve

if TYPE_CHECKING:
    from tau.kube import KubeClient

OWNER = "researcher: service name / --kind / -n"


def _missing(kind: str, name: str, namespace: str) -> RuntimeFailure:
    return RuntimeFailure(
        f'{KIND_RESOURCES[kind][0].kind} "{name}" not found in namespace "{namespace}"',
        hint=f"check the name, -n and --kind, or deploy it with `tau serve deploy {name}`",
        owner=OWNER,
    )


def _foreign(obj: dict[str, Any], name: str, namespace: str) -> RuntimeFailure:
    return RuntimeFailure(
        f'{obj.get("kind")} "{name}" in namespace "{namespace}" was not deployed by tau serve;'
        " refusing to manage it",
        hint="manage it with the tool that created it",
        owner=OWNER,
    )


def _get_endpoint(client: KubeClient, kind: str, name: str, namespace: str) -> dict[str, Any]:
    obj = client.get_or_none(KIND_RESOURCES[kind][0], name, namespace)
    if obj is None:
        raise _missing(kind, name, namespace)
    if not owned_by_serve(obj, name):
        raise _foreign(obj, name, namespace)
    return obj


def status(client: KubeClient, kind: str, name: str, namespace: str) -> dict[str, Any]:
    obj = _get_endpoint(client, kind, name, namespace)
    if kind == "rayservice":
        return rayservice_status(obj)
    hpa = client.get_or_none(HORIZONTAL_POD_AUTOSCALERS, name, namespace)
    service = client.get_or_none(SERVICES, name, namespace)
    return deployment_status(
        obj,
        hpa if hpa is not None and owned_by_serve(hpa, name) else None,
        service if service is not None and owned_by_serve(service, name) else None,
    )


def rayservice_status(obj: dict[str, Any]) -> dict[str, Any]:
    """Serve status, each application's and deployment's health, and the endpoint URL."""
    meta, spec, st = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    ready = _condition(st, "Ready")
    applications = []
    active = (st.get("activeServiceStatus") or {}).get("applicationStatuses") or {}
    for app_name in sorted(active):
        app = active[app_name] or {}
        deployments = app.get("serveDeploymentStatuses") or {}
        applications.append(
            {
                "name": app_name,
                "status": app.get("status") or "",
                "message": app.get("message") or "",
                "deployments": [
                    {
                        "name": dep,
                        "status": (deployments[dep] or {}).get("status") or "",
                        "message": (deployments[dep] or {}).get("message") or "",
                    }
                    for dep in sorted(deployments)
                ],
            }
        )
    healthy = bool(applications) and all(
        app["status"] == "RUNNING" and all(d["status"] == "HEALTHY" for d in app["deployments"])
        for app in applications
    )
    state = st.get("serviceStatus") or (
        "Running" if ready and ready.get("status") == "True" else "Pending"
    )
    return {
        "kind": "rayservice",
        "name": meta["name"],
        "namespace": meta["namespace"],
        "status": state,
        "ready": bool(ready and ready.get("status") == "True"),
        "reason": (ready or {}).get("reason") or "",
        "healthy": healthy,
        "serveEndpoints": int(st.get("numServeEndpoints") or 0),
        "endpoint": f"http://{meta['name']}-serve-svc.{meta['namespace']}.svc:{_serve_port(spec)}",
        "applications": applications,
        "created": meta.get("creationTimestamp") or "",
    }


def deployment_status(
    obj: dict[str, Any], hpa: dict[str, Any] | None, service: dict[str, Any] | None
) -> dict[str, Any]:
    meta, spec, st = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
    record: dict[str, Any] = {
        "kind": "deployment",
        "name": meta["name"],
        "namespace": meta["namespace"],
        "ready": int(st.get("readyReplicas") or 0),
        "desired": int(spec.get("replicas") or 0),
        "available": int(st.get("availableReplicas") or 0),
        "updated": int(st.get("updatedReplicas") or 0),
        "endpoint": "",
        "autoscaling": None,
        "created": meta.get("creationTimestamp") or "",
    }
    if service is not None:
        port = ((service.get("spec") or {}).get("ports") or [{}])[0].get("port")
        record["endpoint"] = f"http://{meta['name']}.{meta['namespace']}.svc:{port}"
    if hpa is not None:
        hpa_spec, hpa_status = hpa.get("spec") or {}, hpa.get("status") or {}
        record["autoscaling"] = {
            "minReplicas": int(hpa_spec.get("minReplicas") or 1),
            "maxReplicas": int(hpa_spec.get("maxReplicas") or 0),
            "currentReplicas": int(hpa_status.get("currentReplicas") or 0),
            "desiredReplicas": int(hpa_status.get("desiredReplicas") or 0),
        }
    return record


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def _serve_port(spec: dict[str, Any]) -> int:
    try:
        config = safeyaml.load(spec.get("serveConfigV2") or "") or {}
        return int((config.get("http_options") or {}).get("port") or 8000)
    except (TypeError, ValueError, AttributeError):  # YamlRefused is a ValueError
        return 8000


def age(created: str, now: datetime | None = None) -> str:
    """kubectl-style age: 45s, 12m, 3h, 9d."""
    if not created:
        return ""
    try:
        when = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return ""
    seconds = int(((now or datetime.now(UTC)) - when).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def scale(client: KubeClient, kind: str, name: str, namespace: str, replicas: int | None) -> int:
    if kind == "rayservice":
        raise UsageError(
            "scaling a RayService is not yet implemented: its replica count lives in the"
            " serialized Serve config",
            hint=f"redeploy with `tau serve deploy {name} --replicas N` (or --min-replicas/"
            "--max-replicas)",
            owner="researcher: tau serve deploy flags",
        )
    if replicas is None:
        raise UsageError("--replicas is required", owner="researcher: tau serve scale flags")
    if replicas < 0:
        raise UsageError(
            f"--replicas {replicas} must be >= 0", owner="researcher: tau serve scale flags"
        )
    _get_endpoint(client, kind, name, namespace)
    hpa = client.get_or_none(HORIZONTAL_POD_AUTOSCALERS, name, namespace)
    if hpa is not None and owned_by_serve(hpa, name):
        spec = hpa.get("spec") or {}
        raise UsageError(
            f'Deployment "{name}" is autoscaled by HorizontalPodAutoscaler "{name}"'
            f" ({spec.get('minReplicas', 1)}..{spec.get('maxReplicas')} replicas)",
            hint="redeploy with other --min-replicas/--max-replicas, or without --max-replicas"
            " to scale it directly",
            owner="researcher: tau serve deploy flags",
        )
    client.patch(
        DEPLOYMENTS, name, {"spec": {"replicas": replicas}}, namespace, subresource="scale"
    )
    return replicas


def delete(client: KubeClient, kind: str, name: str, namespace: str) -> list[str]:
    """Delete the endpoint and what tau serve created beside it; [] when nothing existed.

    Deletion is foreground, so the endpoint stays visible (terminating) until its pods are
    gone; call `wait_gone` for kubectl's "deleted means gone" behaviour.
    """
    from tau.kube.deletion import delete as delete_object

    primary, *owned = KIND_RESOURCES[kind]
    obj = client.get_or_none(primary, name, namespace)
    if obj is not None and not owned_by_serve(obj, name):
        raise _foreign(obj, name, namespace)
    deleted = []
    for resource in (primary, *owned):
        if resource is not primary:
            found = client.get_or_none(resource, name, namespace)
            if found is None or not owned_by_serve(found, name):
                continue
        elif obj is None:
            continue
        if delete_object(client, resource, name, namespace, propagation="Foreground") is not None:
            deleted.append(f"{resource.kind.lower()}/{name}")
    return deleted


def wait_gone(
    client: KubeClient,
    kind: str,
    name: str,
    namespace: str,
    timeout: float,
    progress: Callable[[float], None] | None = None,
) -> None:
    """Block until the endpoint object no longer exists, so a following deploy or delete sees
    a clean namespace; a finalizer that never clears is a runtime failure naming it."""
    primary = KIND_RESOURCES[kind][0]
    deadline = time.monotonic() + timeout
    started = time.monotonic()
    while True:
        obj = client.get_or_none(primary, name, namespace)
        if obj is None:
            return
        if time.monotonic() >= deadline:
            finalizers = ", ".join(obj.get("metadata", {}).get("finalizers") or []) or "none"
            raise RuntimeFailure(
                f"{primary.kind.lower()}/{name} in namespace {namespace} is still terminating"
                f" after {timeout:g}s (finalizers: {finalizers})",
                hint="its controller must clear the finalizers; rerun with a longer --timeout"
                " or --no-wait",
                owner="platform operator: the endpoint's controller (KubeRay, garbage collector)",
            )
        if progress is not None:
            progress(time.monotonic() - started)
        time.sleep(1.0)

"""Deployment rendering: Kueue pod integration, probes, Service and HPA, goldens."""

from __future__ import annotations

import pytest

from tau import keys
from tau.errors import ValidationError
from tau.render import redact_secrets
from tau.render.deployment import render_deployment

from . import golden, serve_intents
from .schema import validate_rendered

DEPLOYMENTS = {
    name: fixture for name, fixture in serve_intents.FIXTURES.items() if "deployment" in name
}


@pytest.mark.parametrize("fixture", sorted(DEPLOYMENTS))
def test_deployment_matches_golden_and_the_kubernetes_schema(fixture):
    objects = render_deployment(DEPLOYMENTS[fixture]())
    validate_rendered(objects)
    golden.check(f"serve-{fixture}", golden.dump(redact_secrets(objects)))


def test_every_pod_is_kueue_managed_with_the_deployment_as_suspending_parent():
    deployment, service = render_deployment(serve_intents.deployment_service_probes())
    assert deployment["metadata"]["labels"][keys.KUEUE_QUEUE_NAME] == "jobqueue"
    template = deployment["spec"]["template"]
    assert template["metadata"]["labels"][keys.KUEUE_QUEUE_NAME] == "jobqueue"
    assert template["metadata"]["labels"][keys.KUEUE_MANAGED] == "true"
    assert template["metadata"]["annotations"][keys.KUEUE_POD_SUSPENDING_PARENT] == "deployment"
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["selector"]["matchLabels"] == {"app": "vllm"}
    assert service["spec"]["selector"] == {"app": "vllm"}
    assert service["spec"]["ports"] == [
        {"name": "http", "port": 80, "targetPort": 8000, "protocol": "TCP"}
    ]


def test_probes_use_the_port_the_container_listens_on():
    (deployment, _) = render_deployment(serve_intents.deployment_service_probes())
    pod = deployment["spec"]["template"]["spec"]
    main = pod["containers"][0]
    assert main["readinessProbe"] == {"httpGet": {"path": "/health", "port": 8000}}
    assert main["startupProbe"]["failureThreshold"] == 60
    assert main["livenessProbe"]["httpGet"]["port"] == 8000
    assert [c["name"] for c in pod["initContainers"]] == ["warm"]
    assert [c["name"] for c in pod["containers"]] == ["main", "metrics"]
    # init and sidecar containers see the user volumes, not the checkpoint or /dev/shm
    assert [m["mountPath"] for m in pod["initContainers"][0]["volumeMounts"]] == [
        "/root/.cache",
        "/etc/vllm",
    ]


def test_autoscaling_renders_an_hpa_and_leaves_replicas_to_it():
    deployment, service, hpa = render_deployment(serve_intents.deployment_hpa())
    assert "replicas" not in deployment["spec"]
    assert service["spec"]["ports"][0]["targetPort"] == 8080
    spec = hpa["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "echo"}
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 5)
    assert spec["metrics"][0]["resource"]["target"] == {
        "type": "Utilization",
        "averageUtilization": 80,
    }
    assert spec["metrics"][1]["pods"]["target"]["averageValue"] == "50"
    assert spec["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 300


def test_a_probe_without_any_port_is_refused():
    intent = serve_intents.replace(
        serve_intents.deployment_hpa(), deployment_ports=(), service_port=0, service_target_port=0
    )
    intent = serve_intents.replace(
        intent, probes=serve_intents.dataclasses.replace(intent.probes, readiness="/ready")
    )
    with pytest.raises(ValidationError) as caught:
        render_deployment(intent)
    assert caught.value.one_line().startswith(
        "a probe path needs a port: set --service-port, --service-target-port or --deployment-port"
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "Web"}, "service name 'Web' must be a DNS-1035 label"),
        ({"name": "w" * 64}, "service name 'wwww"),
        (
            {
                "mounts": (
                    serve_intents.dataclasses.replace(
                        serve_intents.deployment_service_probes().mounts[0], path="/data"
                    ),
                )
            },
            "--checkpoint mounts PVC blob-training at /data",
        ),
        (
            {
                "mounts": (
                    serve_intents.dataclasses.replace(
                        serve_intents.deployment_service_probes().mounts[0], path="/dev/shm"
                    ),
                )
            },
            "--shm-size adds volume tau-shm at /dev/shm",
        ),
        ({"env": (("TAU_PROFILE", "x"),)}, "--env TAU_PROFILE is set by Tau"),
    ],
)
def test_render_refusals_name_the_flag(changes, message):
    intent = serve_intents.replace(serve_intents.deployment_service_probes(), **changes)
    with pytest.raises(ValidationError) as caught:
        render_deployment(intent)
    assert caught.value.one_line().startswith(message)

"""`tau serve status` records, from objects shaped like what KubeRay and Kubernetes report."""

from __future__ import annotations

from datetime import UTC, datetime

from tau.serving.manage import age, deployment_status, rayservice_status

SERVE_CONFIG = "http_options:\n  host: 0.0.0.0\n  port: 9000\napplications: []\n"


def rayservice(status: dict) -> dict:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {
            "name": "policy",
            "namespace": "research",
            "creationTimestamp": "2026-12-01T10:00:00Z",
        },
        "spec": {"serveConfigV2": SERVE_CONFIG},
        "status": status,
    }


def test_a_running_rayservice_reports_every_application_and_deployment():
    record = rayservice_status(
        rayservice(
            {
                "serviceStatus": "Running",
                "numServeEndpoints": 1,
                "conditions": [
                    {"type": "Ready", "status": "True", "reason": "NonZeroServeEndpoints"}
                ],
                "activeServiceStatus": {
                    "applicationStatuses": {
                        "default": {
                            "status": "RUNNING",
                            "serveDeploymentStatuses": {
                                "default": {"status": "HEALTHY"},
                                "Preprocess": {"status": "UPDATING", "message": "scaling"},
                            },
                        }
                    }
                },
            }
        )
    )
    assert record["status"] == "Running" and record["ready"] is True
    assert record["reason"] == "NonZeroServeEndpoints"
    assert record["serveEndpoints"] == 1
    assert record["endpoint"] == "http://policy-serve-svc.research.svc:9000"
    (app,) = record["applications"]
    assert app["deployments"] == [
        {"name": "Preprocess", "status": "UPDATING", "message": "scaling"},
        {"name": "default", "status": "HEALTHY", "message": ""},
    ]
    assert record["healthy"] is False  # one deployment is still updating


def test_a_new_rayservice_is_pending_and_not_healthy():
    record = rayservice_status(rayservice({}))
    assert (record["status"], record["ready"], record["healthy"]) == ("Pending", False, False)
    assert record["applications"] == []


def test_a_deployment_reports_replicas_autoscaling_and_its_service():
    deployment = {
        "metadata": {"name": "web", "namespace": "research", "creationTimestamp": ""},
        "spec": {"replicas": 3},
        "status": {"readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 3},
    }
    hpa = {"spec": {"minReplicas": 2, "maxReplicas": 6}, "status": {"currentReplicas": 3}}
    service = {"spec": {"ports": [{"name": "http", "port": 80}]}}
    record = deployment_status(deployment, hpa, service)
    assert (record["ready"], record["desired"], record["available"], record["updated"]) == (
        2,
        3,
        2,
        3,
    )
    assert record["endpoint"] == "http://web.research.svc:80"
    assert record["autoscaling"] == {
        "minReplicas": 2,
        "maxReplicas": 6,
        "currentReplicas": 3,
        "desiredReplicas": 0,
    }
    bare = deployment_status({**deployment, "status": {}}, None, None)
    assert (bare["ready"], bare["endpoint"], bare["autoscaling"]) == (0, "", None)


def test_age_reads_like_kubectl():
    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    assert age("2026-12-01T11:59:15Z", now) == "45s"
    assert age("2026-12-01T11:48:00Z", now) == "12m"
    assert age("2026-12-01T09:00:00Z", now) == "3h"
    assert age("2026-11-22T12:00:00Z", now) == "9d"
    assert age("", now) == ""

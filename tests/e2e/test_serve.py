"""`tau serve` against the local control plane: Kueue, KubeRay and the tau-core controller.

Server dry-run of both kinds, the onboarding error of a namespace without a default
LocalQueue, a RayService admitted and its status read (KWOK pods; the fake Ray dashboard
reports the Serve applications), redeploys, ownership and finetune checkpoints.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from controller_harness import items, wait_for
from serve_env import CPU_PROFILE, GPU_PROFILE, RAY_IMAGE, Platform, platform_setup
from tau_cli import error_line

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx


@pytest.fixture(scope="module")
def platform(local_cluster: LocalCluster, tmp_path_factory) -> Iterator[Platform]:
    yield from platform_setup(local_cluster, tmp_path_factory.mktemp("serve"))


def rayservice_args(*extra: str) -> list[str]:
    return ["--profile", GPU_PROFILE, "--image", RAY_IMAGE, "--replicas", "1", *extra]


def deployment_args(*extra: str) -> list[str]:
    return [
        "--kind",
        "deployment",
        "--profile",
        CPU_PROFILE,
        "--image",
        "busybox:1.36.1",
        "--deployment-port",
        "8080",
        "--service-port",
        "80",
        "--readiness-path",
        "/",
        *extra,
    ]


def test_server_dry_run_of_both_kinds_creates_nothing(platform):
    ray = platform.serve("deploy", "dry-ray", *rayservice_args("--dry-run=server"))
    assert ray.returncode == 0, ray.stderr
    assert "rayservice.ray.io/dry-ray applied (server dry run)" in ray.stdout
    assert "server dry run accepted service dry-ray (kind=rayservice" in ray.stdout
    web = platform.serve(
        "deploy",
        "dry-web",
        *deployment_args("--max-replicas", "3", "--cpu", "100m"),
        "--dry-run=server",
    )
    assert web.returncode == 0, web.stderr
    for line in (
        "deployment.apps/dry-web applied (server dry run)",
        "service/dry-web applied (server dry run)",
        "horizontalpodautoscaler.autoscaling/dry-web applied (server dry run)",
    ):
        assert line in web.stdout
    assert platform.get("rayservices.ray.io", "dry-ray", "-n", platform.onboarded) is None
    for kind in ("deployment", "service", "hpa"):
        assert platform.get(kind, "dry-web", "-n", platform.onboarded) is None


def test_the_pod_security_level_of_the_namespace_decides_the_pods(platform):
    """Unlabelled, the onboarded namespace gets restricted pods; labelled baseline (warn
    restricted) by its operator it gets plain ones, and the API server's PodSecurity warnings
    are passed on, one line each."""
    rendered = platform.serve("deploy", "psa", *deployment_args("--dry-run=client"))
    assert rendered.returncode == 0, rendered.stderr
    (deployment, _service) = yaml.safe_load_all(rendered.stdout)
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    levels = [
        "pod-security.kubernetes.io/enforce=baseline",
        "pod-security.kubernetes.io/warn=restricted",
    ]
    platform.cluster.kubectl("label", "namespace", platform.onboarded, "--overwrite", *levels)
    try:
        checked = platform.serve("deploy", "psa", *deployment_args("--dry-run=server"))
        assert checked.returncode == 0, checked.stderr
        warned = [line for line in checked.stderr.splitlines() if "PodSecurity" in line]
        assert warned, checked.stderr
        for line in warned:
            assert line.startswith('warning: API server: would violate PodSecurity "restricted')
    finally:
        unlabel = [level.split("=")[0] + "-" for level in levels]
        platform.cluster.kubectl("label", "namespace", platform.onboarded, *unlabel)


def test_client_dry_run_stamps_the_namespace_default_local_queue(platform):
    result = platform.serve("deploy", "render-only", *rayservice_args("--dry-run=client"))
    assert result.returncode == 0, result.stderr
    (rayservice,) = yaml.safe_load_all(result.stdout)
    assert rayservice["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == fx.CLUSTER_QUEUE
    annotations = rayservice["metadata"]["annotations"]
    assert annotations["tau.azure.com/workload-profile"] == GPU_PROFILE
    assert "namespace label kueue.x-k8s.io/default-local-queue" in result.stderr
    assert platform.get("rayservices.ray.io", "render-only", "-n", platform.onboarded) is None


def test_a_namespace_without_a_default_local_queue_is_an_onboarding_error(platform):
    for kind_args in (rayservice_args(), deployment_args()):
        result = platform.serve("deploy", "orphan", *kind_args, namespace=platform.scratch)
        assert result.returncode == 1
        line = error_line(result)
        assert line.startswith(
            f'error: namespace "{platform.scratch}" has no platform-managed default LocalQueue'
        )
        assert "nothing was created" in line
        assert line.endswith("(owner: platform operator (namespace onboarding))")
    for kind in ("rayservices.ray.io", "deployment", "service"):
        assert items(platform.cluster, kind, "-n", platform.scratch) == []


def test_a_rayservice_is_admitted_and_its_status_read(platform):
    result = platform.serve("deploy", "policy", *rayservice_args("--env", "LOG_LEVEL=info"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"deployed service policy (kind=rayservice, profile={GPU_PROFILE}, image={RAY_IMAGE},"
        f" ns={platform.onboarded})",
        f"track: tau serve status policy -n {platform.onboarded} --kind rayservice"
        f" --context {platform.context}",
    ]

    def healthy() -> dict[str, Any] | None:
        status = platform.serve("status", "policy", "-o", "json")
        assert status.returncode == 0, status.stderr
        record = json.loads(status.stdout)
        return record if record["healthy"] else None

    record = wait_for("RayService applications healthy", healthy, timeout=180, interval=2)
    (app,) = record["applications"]
    assert (app["name"], app["status"]) == ("default", "RUNNING")
    assert app["deployments"] == [{"name": "default", "status": "HEALTHY", "message": ""}]
    assert record["endpoint"] == f"http://policy-serve-svc.{platform.onboarded}.svc:8000"
    table = platform.serve("status", "policy")
    assert table.returncode == 0
    assert table.stdout.splitlines()[0].split() == ["NAME", "STATUS", "READY", "AGE"]
    assert "default" in table.stdout

    # A RayService is resized by redeploying, never by `scale`.
    refused = platform.serve("scale", "policy", "--replicas", "3")
    assert refused.returncode == 2
    assert "redeploy with `tau serve deploy policy --replicas N`" in error_line(refused)
    redeploy = platform.serve("deploy", "policy", *rayservice_args()[:-2], "--replicas", "3")
    assert redeploy.returncode == 0, redeploy.stderr
    live = platform.get("rayservices.ray.io", "policy", "-n", platform.onboarded)
    (app_config,) = yaml.safe_load(live["spec"]["serveConfigV2"])["applications"]
    assert app_config["deployments"] == [{"name": "default", "num_replicas": 3}]
    assert "LOG_LEVEL" not in live["spec"]["serveConfigV2"]  # the redeploy's flags, exactly

    deleted = platform.serve("delete", "policy")
    assert deleted.stdout == f"deleted rayservice/policy (ns={platform.onboarded})\n"
    again = platform.serve("delete", "policy")
    assert again.returncode == 0
    assert "not found" in again.stdout and "nothing to delete" in again.stdout
    wait_for(
        "RayService and its RayCluster gone",
        lambda: (
            not items(platform.cluster, "rayservices.ray.io", "-n", platform.onboarded)
            and not items(platform.cluster, "rayclusters.ray.io", "-n", platform.onboarded)
        ),
        timeout=120,
    )


def test_an_object_tau_serve_did_not_create_is_never_taken_over(platform):
    platform.cluster.kubectl(
        "create", "deployment", "foreign", "--image=busybox:1.36.1", "-n", platform.onboarded
    )
    result = platform.serve("deploy", "foreign", *deployment_args())
    assert result.returncode == 1
    assert "was not deployed by tau serve; refusing to take it over" in error_line(result)
    assert error_line(platform.serve("delete", "foreign", "--kind", "deployment")).endswith(
        "(owner: researcher: service name / --kind / -n)"
    )
    assert platform.get("deployment", "foreign", "-n", platform.onboarded) is not None


def test_status_of_a_missing_endpoint_says_how_to_deploy_it(platform):
    result = platform.serve("status", "nobody", "--kind", "deployment")
    assert result.returncode == 1
    assert error_line(result).startswith(
        f'error: Deployment "nobody" not found in namespace "{platform.onboarded}"'
    )


def finished_run(platform: Platform, name: str, *, artifact: str) -> None:
    """A Job that ran to completion (KWOK succeeds Job pods) and recorded its checkpoint the
    way `tau run` annotates it."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": platform.onboarded,
            "annotations": {
                "tau.azure.com/checkpoint-artifact": artifact,
                "tau.azure.com/result-pvc": "finetune-data",
                "tau.azure.com/result-path": f"/data/checkpoints/finetunes/{name}",
            },
        },
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox:1.36.1"}],
                }
            }
        },
    }
    platform.cluster.apply([job])
    wait_for(
        f"Job {name} complete",
        lambda: any(
            c["type"] == "Complete" and c["status"] == "True"
            for c in (
                (platform.get("job", name, "-n", platform.onboarded) or {}).get("status") or {}
            ).get("conditions")
            or []
        ),
        timeout=120,
    )


def pvc(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def test_from_finetune_serves_the_checkpoint_the_run_recorded(platform):
    finished_run(platform, "policy-ft", artifact="final")
    missing = platform.serve("deploy", "ft-web", *deployment_args("--from-finetune", "policy-ft"))
    assert missing.returncode == 1
    assert error_line(missing).startswith(
        f'error: --checkpoint-pvc: PersistentVolumeClaim "finetune-data" does not exist in'
        f' namespace "{platform.onboarded}"; nothing was created'
    )
    assert platform.get("deployment", "ft-web", "-n", platform.onboarded) is None
    platform.cluster.apply([pvc(platform.onboarded, "finetune-data")])
    result = platform.serve("deploy", "ft-web", *deployment_args("--from-finetune", "policy-ft"))
    assert result.returncode == 0, result.stderr
    deployment = platform.get("deployment", "ft-web", "-n", platform.onboarded)
    pod = deployment["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["TAU_MODEL_PATH"] == "/data/checkpoints/finetunes/policy-ft/final"
    assert {
        "name": "tau-checkpoint",
        "persistentVolumeClaim": {"claimName": "finetune-data", "readOnly": True},
    } in pod["volumes"]
    assert platform.serve("delete", "ft-web", "--kind", "deployment").returncode == 0

    unfinished = platform.serve("deploy", "x", *deployment_args("--from-finetune", "no-such-run"))
    assert unfinished.returncode == 1
    assert error_line(unfinished).startswith(
        f'error: --from-finetune no-such-run: no Job or RayJob "no-such-run" in namespace'
        f' "{platform.onboarded}"'
    )


def test_a_deployment_redeploys_from_autoscaled_to_fixed_and_scales(platform):
    autoscaled = platform.serve(
        "deploy", "web", *deployment_args("--max-replicas", "3", "--cpu", "100m")
    )
    assert autoscaled.returncode == 0, autoscaled.stderr
    hpa = platform.get("hpa", "web", "-n", platform.onboarded)
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 3)
    refused = platform.serve("scale", "web", "--kind", "deployment", "--replicas", "2")
    assert refused.returncode == 2
    assert error_line(refused).startswith(
        'error: Deployment "web" is autoscaled by HorizontalPodAutoscaler "web" (1..3 replicas)'
    )

    fixed = platform.serve("deploy", "web", *deployment_args())
    assert fixed.returncode == 0, fixed.stderr
    assert fixed.stdout.splitlines()[0] == "removed horizontalpodautoscaler/web"
    assert platform.get("hpa", "web", "-n", platform.onboarded) is None
    scaled = platform.serve("scale", "web", "--kind", "deployment", "--replicas", "2")
    assert scaled.stdout == f"scaled deployment/web to 2 replicas (ns={platform.onboarded})\n"
    record = json.loads(
        platform.serve("status", "web", "--kind", "deployment", "-o", "json").stdout
    )
    assert (record["desired"], record["autoscaling"]) == (2, None)
    assert record["endpoint"] == f"http://web.{platform.onboarded}.svc:80"

    deleted = platform.serve("delete", "web", "--kind", "deployment")
    assert deleted.stdout.splitlines() == [
        f"deleted deployment/web (ns={platform.onboarded})",
        f"deleted service/web (ns={platform.onboarded})",
    ]
    wait_for(
        "the Deployment, its pods and Service gone",
        lambda: (
            not any(
                items(platform.cluster, kind, "-n", platform.onboarded, "-l", "app=web")
                for kind in ("deployment", "replicaset", "pods", "service")
            )
        ),
        timeout=120,
    )

"""A Deployment endpoint running on the real node: it answers HTTP through its Service, scales
to two replicas, and `tau serve delete` leaves nothing behind.

The server is Python's http.server in this checkout's runtime image (`local_images`), in a
namespace enforcing Pod Security ``restricted``. The local
cluster has no Kueue pod integration, so nothing injects the real pool's placement the way a
Kueue flavor does on AKS; the test adds that placement (node selector and toleration) to the
served Deployment, as the platform's flavor would, and leaves everything else to `tau serve`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from controller_harness import items, wait_for
from images_fixture import local_images  # noqa: F401  (session fixture)
from real_node import enforce_restricted, shell_pod, wait_for_phase
from serve_env import CPU_PROFILE, Platform, platform_setup

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx

BODY = "served-by-tau"
SERVER = (
    f"mkdir -p /tmp/www && echo {BODY} > /tmp/www/index.html && "
    "exec python3 -m http.server 8080 --directory /tmp/www"
)


@pytest.fixture(scope="module")
def platform(local_cluster: LocalCluster, tmp_path_factory) -> Iterator[Platform]:
    """The onboarded namespace enforces Pod Security restricted, as a workspace's does: a
    Deployment is admitted whatever its pods, so only running pods prove they pass."""
    for platform in platform_setup(local_cluster, tmp_path_factory.mktemp("serve-real")):
        enforce_restricted(local_cluster, platform.onboarded)
        yield platform


def status(platform: Platform, name: str) -> dict[str, Any]:
    result = platform.serve("status", name, "--kind", "deployment", "-o", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def ready(platform: Platform, name: str, replicas: int) -> dict[str, Any] | None:
    record = status(platform, name)
    return record if record["ready"] == replicas == record["desired"] else None


def fetch(platform: Platform, host: str, attempt: str) -> str:
    """GET / from `host`:80 in a pod on the real node (cluster DNS, kube-proxy, the Service).

    busybox's nc, not wget (busybox-static's wget crashes in glibc's NSS); a few tries, since
    the first request can race kube-proxy's rules for new endpoints.
    """
    script = (
        f"for i in $(seq 20); do printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 3 {host} 80"
        f" | grep {BODY} && exit 0; sleep 1; done; exit 1"
    )
    client = shell_pod(platform.cluster, f"client-{attempt}", script)
    client["metadata"]["namespace"] = platform.onboarded
    platform.cluster.apply([client])
    phase = wait_for_phase(
        platform.cluster, platform.onboarded, f"client-{attempt}", {"Succeeded", "Failed"}
    )
    logs = platform.cluster.kubectl("logs", f"client-{attempt}", "-n", platform.onboarded)
    assert phase == "Succeeded", logs.stdout + logs.stderr
    return logs.stdout


def test_a_deployment_endpoint_answers_http_scales_and_is_removed(platform, local_images):  # noqa: F811
    image = local_images["runtime"].reference
    deployed = platform.serve(
        "deploy",
        "web",
        "--kind",
        "deployment",
        "--profile",
        CPU_PROFILE,
        "--image",
        image,
        "--command",
        "sh",
        "--arg",
        "-c",
        "--arg",
        SERVER,
        "--deployment-port",
        "8080",
        "--service-port",
        "80",
        "--readiness-path",
        "/",
        "--cpu",
        "50m",
        "--memory",
        "32Mi",
    )
    assert deployed.returncode == 0, deployed.stderr
    placement = {
        "spec": {
            "template": {
                "spec": {
                    "nodeSelector": dict(fx.REAL_NODE_SELECTOR),
                    "tolerations": [fx.REAL_NODE_TOLERATION],
                }
            }
        }
    }
    platform.cluster.kubectl(
        "patch",
        "deployment",
        "web",
        "-n",
        platform.onboarded,
        "--type=strategic",
        "-p",
        json.dumps(placement),
    )
    # The first start pulls the runtime image onto the node.
    record = wait_for("one ready replica", lambda: ready(platform, "web", 1), timeout=420)
    assert record["endpoint"] == f"http://web.{platform.onboarded}.svc:80"
    assert BODY in fetch(platform, f"web.{platform.onboarded}.svc.cluster.local", "1")

    scaled = platform.serve("scale", "web", "--kind", "deployment", "--replicas", "2")
    assert scaled.stdout == f"scaled deployment/web to 2 replicas (ns={platform.onboarded})\n"
    wait_for("two ready replicas", lambda: ready(platform, "web", 2), timeout=180)
    pods = items(platform.cluster, "pods", "-n", platform.onboarded, "-l", "app=web")
    assert {pod["spec"]["nodeName"] for pod in pods} == {fx.REAL_NODE}
    assert {pod["spec"]["securityContext"]["runAsUser"] for pod in pods} == {65532}
    assert BODY in fetch(platform, "web", "2")

    deleted = platform.serve("delete", "web", "--kind", "deployment")
    assert deleted.stdout.splitlines() == [
        f"deleted deployment/web (ns={platform.onboarded})",
        f"deleted service/web (ns={platform.onboarded})",
    ]
    wait_for(
        "the endpoint's Deployment, ReplicaSets, pods and Service gone",
        lambda: (
            not any(
                items(platform.cluster, kind, "-n", platform.onboarded, "-l", "app=web")
                for kind in ("deployment", "replicaset", "pods", "service")
            )
        ),
        timeout=120,
    )

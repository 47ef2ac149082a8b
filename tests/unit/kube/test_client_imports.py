"""Talking to the API server loads kubernetes' kubeconfig loader and REST layer, not the
whole library (the dynamic client, jsonschema, websocket streams, the YAML creator, Google's
auth transport): that is most of the start-up a `tau run` or `tau run status` pays before
its first request (bench/submit.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.unit.closed_port import closed_port_kubeconfig

REPO = Path(__file__).resolve().parents[3]
PROBE = """
import json, sys
from tau.kube import KubeClient, UnavailableError
from tau.kube.resources import TAU_WORKSPACES
try:
    KubeClient(sys.argv[1], "x").get(TAU_WORKSPACES, "research", "tau-system")
except UnavailableError as error:
    failure, loaded = error.one_line(), sorted(sys.modules)
import google.auth.transport.requests
from kubernetes.config import kube_config
print(json.dumps({
    "error": failure,
    "modules": loaded,
    "gcp": kube_config.google.auth.transport.requests.Request.__module__,
}))
"""


def test_a_request_loads_only_the_kubeconfig_loader_and_the_rest_layer(tmp_path: Path) -> None:
    kubeconfig = closed_port_kubeconfig(tmp_path / "kubeconfig")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(kubeconfig)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    result = json.loads(done.stdout)
    assert result["error"].startswith("apiserver unavailable: cannot get workspaces")
    loaded = set(result["modules"])
    assert {"kubernetes.config.kube_config", "kubernetes.client.rest"} <= loaded
    heavy = (
        "kubernetes.dynamic",
        "kubernetes.stream",
        "kubernetes.watch",
        "jsonschema",
        "kubernetes.utils.create_from_yaml",
        "kubernetes.utils.quantity",
        "google.oauth2.service_account",
        "cryptography",
    )
    assert sorted(loaded & set(heavy)) == []
    assert not [m for m in loaded if m.startswith("kubernetes.client.api.")]


def test_the_gcp_auth_provider_transport_still_loads_when_used(tmp_path: Path) -> None:
    """Deferred, not removed: kube_config's `gcp` auth provider finds the real module."""
    kubeconfig = closed_port_kubeconfig(tmp_path / "kubeconfig")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(kubeconfig)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert json.loads(done.stdout)["gcp"] == "google.auth.transport.requests"

"""Throwaway checkouts (tests/unit/repos.py) and a local HTTPS stand-in for Entra ID and ARM.

Azure cannot be reached from the test machine, so `access.method: aks` runs the real
azure-identity and azure-mgmt-containerservice clients against this server: OpenID discovery
and the client-credentials token endpoint for the tenant, and ARM's
`listClusterUserCredential` for one managed cluster. TLS (tests/unit/https_standin.py) uses
a throwaway CA that the clients are told to trust through REQUESTS_CA_BUNDLE.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.unit.https_standin import JsonHandler, serve_https
from tests.unit.repos import make_repo, monorepo, tau_config_dir, write_descriptor

__all__ = ["azure", "make_repo", "monorepo", "tau_config_dir", "write_descriptor"]

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
SUBSCRIPTION = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
RESOURCE_GROUP = "rg-research"
CLUSTER = "research-aks"
RESOURCE_ID = (
    f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{RESOURCE_GROUP}/providers/"
    f"Microsoft.ContainerService/managedClusters/{CLUSTER}"
)
ACCESS_TOKEN = "arm-access-token-for-alice"
CLIENT_SECRET = "client-secret-value-never-printed"


def aks_kubeconfig(server: str = "https://research-aks-dns.hcp.westeurope.azmk8s.io:443") -> dict:
    """What AKS returns for an Entra-enabled cluster: a kubelogin exec user, no secret."""
    user = f"clusterUser_{RESOURCE_GROUP}_{CLUSTER}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CLUSTER, "cluster": {"server": server}}],
        "users": [
            {
                "name": user,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "kubelogin",
                        "args": ["get-token", "--login", "azurecli", "--server-id", "6dae42f8"],
                    }
                },
            }
        ],
        "contexts": [{"name": CLUSTER, "context": {"cluster": CLUSTER, "user": user}}],
        "current-context": CLUSTER,
    }


@dataclass
class AzureStandIn:
    """The running stand-in; its class attributes are the identities it recognises."""

    TENANT = TENANT
    RESOURCE_ID = RESOURCE_ID
    ACCESS_TOKEN = ACCESS_TOKEN
    CLIENT_SECRET = CLIENT_SECRET

    url: str
    kubeconfig: dict = field(default_factory=aks_kubeconfig)
    credential_status: int = 200
    token_status: int = 200
    seen: list[tuple[str, str, str]] = field(default_factory=list)


@pytest.fixture
def azure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AzureStandIn]:
    state = AzureStandIn(url="")

    class Handler(JsonHandler):
        def do_GET(self) -> None:
            state.seen.append(("GET", self.path, ""))
            if self.path.startswith(f"/{TENANT}/v2.0/.well-known/openid-configuration"):
                base = f"{state.url}/{TENANT}"
                self.send_json(
                    200,
                    {
                        "issuer": f"{base}/v2.0",
                        "authorization_endpoint": f"{base}/oauth2/v2.0/authorize",
                        "token_endpoint": f"{base}/oauth2/v2.0/token",
                    },
                )
                return
            self.send_json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            state.seen.append(("POST", self.path, self.headers.get("Authorization", "")))
            if self.path.startswith(f"/{TENANT}/oauth2/v2.0/token"):
                if state.token_status != 200:
                    self.send_json(state.token_status, {"error": "invalid_client"})
                    return
                assert CLIENT_SECRET in body
                self.send_json(
                    200,
                    {"access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 3600},
                )
                return
            if self.path.startswith(RESOURCE_ID + "/listClusterUserCredential"):
                if self.headers.get("Authorization") != f"Bearer {ACCESS_TOKEN}":
                    self.send_json(401, {"error": {"code": "InvalidAuthenticationToken"}})
                    return
                if state.credential_status != 200:
                    self.send_json(
                        state.credential_status,
                        {"error": {"code": "AuthorizationFailed", "message": "denied"}},
                    )
                    return
                value = base64.b64encode(yaml.safe_dump(state.kubeconfig).encode()).decode()
                self.send_json(200, {"kubeconfigs": [{"name": "clusterUser", "value": value}]})
                return
            self.send_json(404, {"error": {"code": "NotFound"}})

    with serve_https(Handler, tmp_path, "azure-stand-in") as (state.url, cert):
        for name, value in {
            "REQUESTS_CA_BUNDLE": str(cert),
            "AZURE_AUTHORITY_HOST": state.url,
            "AZURE_TENANT_ID": TENANT,
            "AZURE_CLIENT_ID": "3f2a0c6e-0000-4000-8000-000000000001",
            "AZURE_CLIENT_SECRET": CLIENT_SECRET,
            "TAU_AUTH_MODE": "environment",
            "TAU_AZURE_RESOURCE_MANAGER": state.url,
        }.items():
            monkeypatch.setenv(name, value)
        yield state

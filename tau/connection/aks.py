"""`access.method: aks`: AKS cluster-user credentials obtained with the caller's Azure identity.

The descriptor names the cluster (ARM resource ID) and tenant, never a credential. Tau asks
Azure Resource Manager for the *cluster-user* kubeconfig (for Entra-enabled clusters it holds
a kubelogin exec entry, not a secret), as the signed-in user, then isolates it like any other
kubeconfig context.

Sign-in follows `TAU_AUTH_MODE`: unset/`default` (azure-identity's default chain: environment,
workload identity, managed identity, Azure CLI, ...), `cli`, `environment` (a service
principal in AZURE_* variables), `device-code` or `browser`. `TAU_AZURE_RESOURCE_MANAGER`
points at another ARM endpoint (sovereign clouds).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from tau import safeyaml
from tau.api.connection import WorkspaceConnection, parse_aks_resource_id
from tau.connection.verify import AUTHORIZATION, LayerFailure
from tau.errors import UsageError
from tau.jsontypes import JSONObject
from tau.keys import ENV_AUTH_MODE, ENV_AZURE_AUTHORITY_HOST, ENV_AZURE_RESOURCE_MANAGER

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential
from tau.kube.errors import AccessError

PUBLIC_ARM = "https://management.azure.com"
# Authorities Microsoft's instance discovery knows; any other configured authority host is a
# private cloud the user chose explicitly, so discovery (which needs the public cloud) is off.
KNOWN_AUTHORITIES = {
    "login.microsoftonline.com",
    "login.windows.net",
    "login.microsoftonline.us",
    "login.chinacloudapi.cn",
    "login.partner.microsoftonline.cn",
}
AUTH_MODES = ("default", "cli", "environment", "device-code", "browser")


def azure_credential(tenant_id: str) -> TokenCredential:
    import azure.identity as identity

    mode = (os.environ.get(ENV_AUTH_MODE) or "default").strip().lower()
    authority = os.environ.get(ENV_AZURE_AUTHORITY_HOST, "")
    host = urlparse(authority).netloc or authority
    options: dict[str, Any] = {}
    if host and host not in KNOWN_AUTHORITIES:
        options["disable_instance_discovery"] = True
    if mode == "default":
        return identity.DefaultAzureCredential(interactive_browser_tenant_id=tenant_id, **options)
    if mode == "cli":
        return identity.AzureCliCredential(tenant_id=tenant_id)
    if mode == "environment":
        return identity.EnvironmentCredential(**options)
    if mode == "device-code":
        return identity.DeviceCodeCredential(tenant_id=tenant_id, **options)
    if mode == "browser":
        return identity.InteractiveBrowserCredential(tenant_id=tenant_id, **options)
    raise UsageError(f"{ENV_AUTH_MODE}={mode!r} is not one of: {', '.join(AUTH_MODES)}")


def cluster_user_kubeconfig(descriptor: WorkspaceConnection) -> JSONObject:
    """The cluster-user kubeconfig, its context renamed to the descriptor's `contextName`."""
    from azure.core.exceptions import (
        ClientAuthenticationError,
        HttpResponseError,
        ServiceRequestError,
    )
    from azure.mgmt.containerservice import ContainerServiceClient

    aks = descriptor.access.aks
    assert aks is not None
    cluster = parse_aks_resource_id(aks.resourceID)
    endpoint = (os.environ.get(ENV_AZURE_RESOURCE_MANAGER) or PUBLIC_ARM).rstrip("/")
    client = ContainerServiceClient(
        azure_credential(aks.tenantID),
        cluster.subscription,
        base_url=endpoint,
        credential_scopes=[f"{endpoint}/.default"],
    )
    shown = f"AKS cluster {cluster.name} (resource group {cluster.resource_group})"
    try:
        result = client.managed_clusters.list_cluster_user_credentials(
            cluster.resource_group, cluster.name
        )
    except ClientAuthenticationError as error:
        raise AccessError(
            f"Azure sign-in for tenant {aks.tenantID} failed ({type(error).__name__})",
            hint=f"sign in (`az login --tenant {aks.tenantID}`) or set {ENV_AUTH_MODE}",
        ) from None
    except ServiceRequestError:
        raise AccessError(
            f"cannot reach Azure Resource Manager at {endpoint}",
            hint="check your network path to Azure",
        ) from None
    except HttpResponseError as error:
        if error.status_code == 403:
            raise LayerFailure(
                AUTHORIZATION,
                f"your Azure identity may not list cluster-user credentials of {shown}",
                hint="ask for the Azure Kubernetes Service Cluster User Role on the cluster",
            ) from None
        if error.status_code == 404:
            raise AccessError(
                f"{shown} was not found in subscription {cluster.subscription}",
                hint="check access.aks.resourceID in the descriptor",
                owner="platform operator who authored the descriptor",
            ) from None
        raise AccessError(
            f"Azure Resource Manager refused the credential request for {shown} "
            f"(HTTP {error.status_code})"
        ) from None
    finally:
        client.close()
    kubeconfigs = result.kubeconfigs or []
    if not kubeconfigs or not kubeconfigs[0].value:
        raise AccessError(f"Azure returned no cluster-user kubeconfig for {shown}")
    try:
        config = safeyaml.load(kubeconfigs[0].value)
    except safeyaml.YamlRefused:
        config = None
    if not isinstance(config, dict) or not config.get("contexts"):
        raise AccessError(f"Azure returned an unusable kubeconfig for {shown}")
    return _rename_context(config, descriptor.context_name)


def _rename_context(config: JSONObject, name: str) -> JSONObject:
    contexts = config["contexts"]
    wanted = next((c for c in contexts if c.get("name") == name), None)
    if wanted is None:
        current = config.get("current-context")
        wanted = next((c for c in contexts if c.get("name") == current), contexts[0])
        wanted = {**wanted, "name": name}
    config = {**config, "contexts": [wanted], "current-context": name}
    return config

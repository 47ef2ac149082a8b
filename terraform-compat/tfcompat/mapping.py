"""Terraform resource address -> Pulumi resource, so an existing environment can be adopted.

Each row says which Pulumi resource (type and logical name, under which component) takes over
a Terraform-managed object, and the ID `pulumi import` needs for it. Terraform's local-exec
steps map to the Kubernetes objects they created; steps with no Pulumi counterpart are listed
with an empty type so nothing is silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from infra.config import ADX_DATABASES, SELF_MANAGED, StackConfig
from infra.platform_values import queue_after_release
from tau.keys import DEFAULT_QUEUE

ARM_GROUP = "/subscriptions/{subscription_id}/resourceGroups/{resource_group_name}"
ARM_AKS = ARM_GROUP + "/providers/Microsoft.ContainerService/managedClusters/{cluster_name}"
ARM_KUSTO = ARM_GROUP + "/providers/Microsoft.Kusto/clusters/{adx_cluster_name}"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
ARM_IDENTITY = ARM_GROUP + "/providers/Microsoft.ManagedIdentity/userAssignedIdentities/"

COMPONENT_TYPES = {
    "aks": "taugrid:infra:AksCluster",
    "gpu": "taugrid:infra:GpuNodePool",
    "portal-identity": "taugrid:infra:WorkloadIdentity",
    "adx-mon-identity": "taugrid:infra:WorkloadIdentity",
    "lifecycle-recorder-identity": "taugrid:infra:WorkloadIdentity",
    "adx": "taugrid:infra:AdxMetrics",
    "platform": "taugrid:infra:TauGridPlatform",
    "bootstrap-workspace": "taugrid:infra:TauWorkspaceBootstrap",
}


@dataclass(frozen=True)
class Mapping:
    terraform: str
    pulumi_type: str
    """Empty when Pulumi has no counterpart (see `note`)."""
    name: str
    parent: str
    """Logical name of the owning component (a key of COMPONENT_TYPES)."""
    import_id: str
    """`pulumi import` ID with {placeholders} filled from the stack config; empty: nothing to
    import (Pulumi creates it)."""
    applies: Callable[[StackConfig], bool]
    note: str = ""


def _always(_: StackConfig) -> bool:
    return True


def _gpu(config: StackConfig) -> bool:
    return config.has_gpu_pool


def _self_managed(config: StackConfig) -> bool:
    return config.has_gpu_pool and config.gpu_stack_mode == SELF_MANAGED


def _mig(config: StackConfig) -> bool:
    return config.has_gpu_pool and config.normalize_gpu_mig


def _adx(config: StackConfig) -> bool:
    return config.enable_adx


def _recorder(config: StackConfig) -> bool:
    return config.enable_lifecycle_recorder


def _install(config: StackConfig) -> bool:
    return config.install_taugrid


def _recorder_namespace(config: StackConfig) -> bool:
    return config.install_taugrid and config.enable_lifecycle_recorder


def _queue(config: StackConfig) -> bool:
    # The generated values never switch Kueue or the queue off; only the operator's overrides do.
    return config.install_taugrid and queue_after_release(config.taugrid_values)


def _gpu_queue(config: StackConfig) -> bool:
    return _queue(config) and config.enable_gpu


def _queue_rows() -> list[Mapping]:
    """The baseline queue: inside the Terraform root's release, applied after it by the stack."""
    note = (
        "part of terraform_data.install_taugrid[0] (the release); the stack applies it after "
        "the release, so the first `pulumi up` moves it out of the release (docs/infra.md)"
    )
    objects = [
        ("kubernetes:kueue.x-k8s.io/v1beta2:Topology", "topology-default-node-topology", _queue),
        (FLAVOR, "resourceflavor-taugrid-default-cpu", _queue),
        (FLAVOR, "resourceflavor-{gpu_flavor_name}", _gpu_queue),
        ("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", f"clusterqueue-{DEFAULT_QUEUE}", _queue),
        *(
            (f"{api}:{kind}", f"{kind.lower()}-{name}", _queue)
            for api, kind in (
                ("kubernetes:scheduling.k8s.io/v1", "PriorityClass"),
                ("kubernetes:kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass"),
            )
            for name in ("taugrid-default", "taugrid-priority")
        ),
    ]
    return [
        Mapping("(baseline queue)", kind, f"platform-queue-{name}", "platform", "", applies, note)
        for kind, name, applies in objects
    ]


def _bootstrap(config: StackConfig) -> bool:
    return config.install_taugrid and config.bootstrap_workspace is not None


def _identity_rows() -> list[Mapping]:
    rows = []
    for address, component, identity, applies in (
        ("portal[0]", "portal-identity", "taugrid-portal-adx", _adx),
        ("adx_mon[0]", "adx-mon-identity", "taugrid-adx-mon", _adx),
        (
            "lifecycle_recorder[0]",
            "lifecycle-recorder-identity",
            "taugrid-lifecycle-recorder",
            _recorder,
        ),
    ):
        rows.append(
            Mapping(
                f"azurerm_user_assigned_identity.{address}",
                "azure-native:managedidentity:UserAssignedIdentity",
                f"{component}-identity",
                component,
                ARM_IDENTITY + identity,
                applies,
            )
        )
    for address, component, identity, credential, applies in (
        ("portal[0]", "portal-identity", "taugrid-portal-adx", "tau-portal", _adx),
        ("adx_mon_ingestor[0]", "adx-mon-identity", "taugrid-adx-mon", "adx-mon-ingestor", _adx),
        ("adx_mon_alerter[0]", "adx-mon-identity", "taugrid-adx-mon", "adx-mon-alerter", _adx),
        (
            "lifecycle_recorder[0]",
            "lifecycle-recorder-identity",
            "taugrid-lifecycle-recorder",
            "tau-lifecycle-recorder",
            _recorder,
        ),
    ):
        rows.append(
            Mapping(
                f"azurerm_federated_identity_credential.{address}",
                "azure-native:managedidentity:FederatedIdentityCredential",
                f"{component}-{credential}",
                component,
                ARM_IDENTITY + f"{identity}/federatedIdentityCredentials/{credential}",
                applies,
            )
        )
    return rows


def _adx_rows() -> list[Mapping]:
    rows = [
        Mapping(
            "azurerm_kusto_cluster.this[0]",
            "azure-native:kusto:Cluster",
            "adx-cluster",
            "adx",
            ARM_KUSTO,
            _adx,
            "name changes are ignored: an adopted legacy 15-character name is kept",
        )
    ]
    for database in ADX_DATABASES:
        rows.append(
            Mapping(
                f'azurerm_kusto_database.this["{database}"]',
                "azure-native:kusto:ReadWriteDatabase",
                f"adx-{database.lower()}",
                "adx",
                ARM_KUSTO + f"/databases/{database}",
                _adx,
            )
        )
    grants = [
        (f'adx_mon["{database}"]', f"taugrid-adx-mon-{database.lower()}", database, _adx, "")
        for database in ADX_DATABASES
    ]
    grants += [
        ("portal[0]", "taugrid-portal-viewer", "Metrics", _adx, ""),
        (
            "portal_cost_viewer[0]",
            "taugrid-portal-cost-viewer",
            "CostTracking",
            _adx,
            "newest revisions only; the address differs between revisions, match by name",
        ),
        (
            "lifecycle_recorder[0]",
            "taugrid-lifecycle-recorder-ingestor",
            "Metrics",
            _recorder,
            "newest revisions hold it as azapi_resource.lifecycle_recorder_ingestor[0]",
        ),
    ]
    for address, assignment, database, applies, note in grants:
        rows.append(
            Mapping(
                f"azurerm_kusto_database_principal_assignment.{address}",
                "azure-native:kusto:DatabasePrincipalAssignment",
                f"adx-{assignment}",
                "adx",
                ARM_KUSTO + f"/databases/{database}/principalAssignments/{assignment}",
                applies,
                note,
            )
        )
    return rows


MAPPINGS: tuple[Mapping, ...] = (
    Mapping(
        "azurerm_resource_group.this",
        "azure-native:resources:ResourceGroup",
        "aks-resource-group",
        "aks",
        ARM_GROUP,
        _always,
    ),
    Mapping(
        "azurerm_kubernetes_cluster.this",
        "azure-native:containerservice:ManagedCluster",
        "aks-cluster",
        "aks",
        ARM_AKS,
        _always,
    ),
    Mapping(
        "azurerm_kubernetes_cluster_node_pool.gpu",
        "azure-native:containerservice:AgentPool",
        "gpu-pool",
        "gpu",
        ARM_AKS + "/agentPools/{gpu_node_pool_name}",
        _gpu,
    ),
    *_adx_rows(),
    *_identity_rows(),
    Mapping(
        "terraform_data.install_nvidia_device_plugin[0]",
        "kubernetes:apps/v1:DaemonSet",
        "gpu-device-plugin",
        "gpu",
        "kube-system/nvidia-device-plugin-daemonset",
        _self_managed,
    ),
    Mapping(
        "terraform_data.normalize_gpu_mig[0]",
        "kubernetes:apps/v1:DaemonSet",
        "gpu-mig-normalizer",
        "gpu",
        "",
        _mig,
        "Terraform deleted its DaemonSet after the run; Pulumi creates and keeps one",
    ),
    Mapping(
        "terraform_data.install_dcgm_exporter[0]",
        "kubernetes:helm.sh/v3:Release",
        "gpu-dcgm-exporter",
        "gpu",
        "dcgm-exporter/dcgm-exporter",
        _self_managed,
    ),
    Mapping(
        "terraform_data.bootstrap_lifecycle_namespace[0]",
        "kubernetes:core/v1:Namespace",
        "platform-namespace-{workspace_namespace}",
        "platform",
        "{workspace_namespace}",
        _recorder_namespace,
    ),
    Mapping(
        "terraform_data.install_taugrid[0]",
        "kubernetes:helm.sh/v3:Release",
        "platform-release",
        "platform",
        "tau-system/taugrid",
        _install,
    ),
    *_queue_rows(),
    Mapping(
        "terraform_data.bootstrap_workspace[0]",
        "kubernetes:tau.azure.com/v1alpha1:TauWorkspace",
        "bootstrap-workspace-workspace",
        "bootstrap-workspace",
        "tau-system/{bootstrap_workspace}",
        _bootstrap,
    ),
    Mapping(
        "terraform_data.install_adx_mon[0], terraform_data.install_adx_functions[0]",
        "",
        "",
        "",
        "",
        _adx,
        "no counterpart: install adx-mon from its published chart with the taugrid-adx-mon "
        "identity (see docs/infra.md); Pulumi leaves an existing adx-mon release alone",
    ),
    Mapping(
        "local_file.*",
        "",
        "",
        "",
        "",
        _always,
        "no counterpart: values are built in memory and passed to the resources",
    ),
    Mapping(
        "data.azurerm_client_config.current",
        "",
        "",
        "",
        "",
        _always,
        "an invoke (azure-native:authorization:getClientConfig), not a resource",
    ),
)


def placeholders(config: StackConfig) -> dict[str, str]:
    return {
        "subscription_id": config.subscription_id or "<subscription-id>",
        "resource_group_name": config.resource_group_name,
        "cluster_name": config.cluster_name,
        "adx_cluster_name": config.resolved_adx_cluster_name,
        "gpu_node_pool_name": config.gpu_node_pool_name,
        "gpu_flavor_name": config.gpu_flavor_name,
        "workspace_namespace": config.workspace_namespace,
        "bootstrap_workspace": config.bootstrap_workspace.name
        if config.bootstrap_workspace
        else "<bootstrap-workspace>",
    }


def component_urn(stack: str, component: str) -> str:
    return f"urn:pulumi:{stack}::taugrid::{COMPONENT_TYPES[component]}::{component}"


def import_file(config: StackConfig, stack: str) -> dict[str, object]:
    """A `pulumi import --file` document adopting every Terraform object this stack manages.

    Children are imported under their components, so run `pulumi up --target` on the
    component URNs first (they hold no cloud state); docs/infra.md has the sequence.
    """
    values = placeholders(config)
    rows = [
        row
        for row in MAPPINGS
        if row.pulumi_type and row.import_id and row.parent and row.applies(config)
    ]
    parents = sorted({row.parent for row in rows})
    return {
        "nameTable": {parent: component_urn(stack, parent) for parent in parents},
        "resources": [
            {
                "type": row.pulumi_type,
                "name": row.name.format(**values),
                "id": row.import_id.format(**values),
                "parent": row.parent,
            }
            for row in rows
        ],
    }

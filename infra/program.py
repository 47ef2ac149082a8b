"""The stack program: stack config in, components composed in install order, outputs out.

Two shapes share one config model. An AKS stack builds the cluster, the GPU pool and its
software stack, the optional ADX plane with its identities, then installs the platform and the
bootstrap workspace. A stack with `kube_context` (the `dev` stack) only installs the platform
onto that existing cluster. Both export the same output names.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pulumi.runtime import config as runtime_config

from infra.adx import AdxMetrics, AdxMetricsArgs, adx_mon_grants, portal_grants, recorder_grants
from infra.aks import AksCluster, AksClusterArgs
from infra.config import (
    SELF_MANAGED,
    StackConfig,
    StackConfigError,
    parse_stack_config,
    project_settings,
)
from infra.gpu import DCGM_EXPORTER_URL, GpuNodePool, GpuNodePoolArgs
from infra.identity import FederatedSubject, WorkloadIdentity, WorkloadIdentityArgs
from infra.platform import TauGridPlatform, TauGridPlatformArgs
from infra.platform_values import (
    ADX_MON_NAMESPACE,
    PORTAL_SERVICE,
    PORTAL_SERVICE_ACCOUNT,
    RECORDER_SERVICE_ACCOUNT,
    SYSTEM_NAMESPACE,
    AdxWiring,
    GpuQueue,
    PlatformValues,
    taugrid_values,
)
from infra.workspace import TauWorkspaceBootstrap, TauWorkspaceBootstrapArgs

OUTPUT_NAMES = (
    "resource_group_name",
    "cluster_name",
    "get_credentials_command",
    "portal_port_forward_command",
    "adx_endpoint",
    "adx_cluster_name",
    "gpu_node_pool_name",
    "gpu_quota",
)
PORTAL_LOCAL_PORT = 18080
TERRAFORM_ONLY_KEYS = ("command_interpreter", "generated_directory")

PORTAL_SUBJECTS = (FederatedSubject("tau-portal", SYSTEM_NAMESPACE, PORTAL_SERVICE_ACCOUNT),)
ADX_MON_SUBJECTS = (
    FederatedSubject("adx-mon-ingestor", ADX_MON_NAMESPACE, "adx-mon-ingestor"),
    FederatedSubject("adx-mon-alerter", ADX_MON_NAMESPACE, "adx-mon-alerter"),
)
RECORDER_SUBJECTS = (
    FederatedSubject("tau-lifecycle-recorder", SYSTEM_NAMESPACE, RECORDER_SERVICE_ACCOUNT),
)


def load_config() -> StackConfig:
    """The running stack's config, validated before any resource is registered."""
    # The engine hands the program its config through the runtime's config map (plus
    # PULUMI_CONFIG in unit tests); only this project's namespace is ours to validate.
    config_map = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    try:
        return parse_stack_config(project_settings(config_map))
    except StackConfigError as error:
        raise pulumi.RunError(
            "invalid stack configuration: " + " | ".join(error.all_problems)
        ) from None


def export_stack() -> None:
    """The whole program: validate the config, register every resource, export the outputs.

    `pulumi up` (infra/__main__.py) and the Automation API (infra/engine.py) both run this.
    """
    for output_name, value in run(load_config()).items():
        pulumi.export(output_name, value)


def portal_port_forward_command(kube_context: str | None = None) -> str:
    context = f" --context {kube_context}" if kube_context else ""
    return (
        f"kubectl{context} -n {SYSTEM_NAMESPACE} port-forward service/{PORTAL_SERVICE} "
        f"{PORTAL_LOCAL_PORT}:80"
    )


def run(config: StackConfig) -> dict[str, Any]:
    """Register every resource of the stack; return the stack outputs by name."""
    for key in TERRAFORM_ONLY_KEYS:
        if key in config.model_fields_set:
            pulumi.log.warn(
                f"{key} has no effect here: Terraform's local-exec steps are Pulumi resources"
            )
    if config.provisions_azure:
        return _aks_environment(config)
    return _existing_cluster(config)


def _gpu_queue(config: StackConfig) -> GpuQueue | None:
    if not config.enable_gpu:
        return None
    installs_exporter = config.has_gpu_pool and config.gpu_stack_mode == SELF_MANAGED
    return GpuQueue(
        flavor_name=config.gpu_flavor_name,
        monitoring_sku_name=config.gpu_monitoring_sku_name,
        gpu_class=config.gpu_class,
        gpu_series=config.gpu_series,
        vm_size=config.gpu_vm_size,
        count_per_node=config.gpu_count_per_node,
        quota=config.gpu_quota,
        dcgm_exporter_url=DCGM_EXPORTER_URL if installs_exporter else None,
    )


def platform_values(config: StackConfig, adx: AdxWiring | None = None) -> dict[str, Any]:
    return taugrid_values(
        PlatformValues(
            workspace_namespace=config.workspace_namespace,
            cluster=config.cluster_name,
            gpu=_gpu_queue(config),
            adx=adx,
            overrides=config.taugrid_values,
        )
    )


def _install_platform(
    config: StackConfig,
    provider: k8s.Provider,
    values: pulumi.Input[dict],
    depends_on: list[pulumi.Resource],
) -> None:
    if not config.install_taugrid:
        return
    platform = TauGridPlatform(
        "platform",
        TauGridPlatformArgs(
            provider=provider,
            values=values,
            chart=config.taugrid_chart,
            version=config.taugrid_version,
            precreate_namespaces=(config.workspace_namespace,)
            if config.enable_lifecycle_recorder
            else (),
            depends_on=depends_on,
            queue_values=platform_values(config),
        ),
    )
    if config.bootstrap_workspace is not None:
        TauWorkspaceBootstrap(
            "bootstrap-workspace",
            TauWorkspaceBootstrapArgs(
                provider=provider,
                name=config.bootstrap_workspace.name,
                entra_group_object_id=config.bootstrap_workspace.entra_group_object_id,
                workspace_namespace=config.workspace_namespace,
                platform=platform,
            ),
        )


def _aks_environment(config: StackConfig) -> dict[str, Any]:
    from pulumi_azure_native import authorization

    tenant_id = config.tenant_id or authorization.get_client_config_output().tenant_id
    aks = AksCluster(
        "aks",
        AksClusterArgs(
            resource_group_name=config.resource_group_name,
            location=config.location,
            cluster_name=config.cluster_name,
            tenant_id=tenant_id,
            kubernetes_version=config.kubernetes_version,
            admin_group_object_ids=list(config.aks_admin_group_object_ids),
            azure_rbac_enabled=config.azure_rbac_enabled,
            system_node_count=config.system_node_count,
            system_vm_size=config.system_vm_size,
            tags=dict(config.tags),
        ),
    )
    install_after: list[pulumi.Resource] = [aks]

    gpu: GpuNodePool | None = None
    if config.has_gpu_pool:
        gpu = GpuNodePool(
            "gpu",
            GpuNodePoolArgs(
                cluster_name=aks.cluster_name,
                resource_group_name=aks.resource_group_name,
                provider=aks.provider,
                pool_name=config.gpu_node_pool_name,
                vm_size=config.gpu_vm_size,
                node_count=config.gpu_node_count,
                auto_scaling_enabled=config.gpu_auto_scaling_enabled,
                min_count=config.gpu_min_count,
                max_count=config.gpu_max_count,
                stack_mode=config.gpu_stack_mode,
                monitoring_sku_name=config.gpu_monitoring_sku_name,
                gpu_class=config.gpu_class,
                gpu_series=config.gpu_series,
                normalize_mig=config.normalize_gpu_mig,
                dcgm_exporter_chart_version=config.dcgm_exporter_chart_version,
                tags=dict(config.tags),
            ),
        )
        install_after.extend(gpu.ready)

    values: pulumi.Input[dict] = platform_values(config)
    adx: AdxMetrics | None = None
    if config.enable_adx:
        adx, adx_values, adx_resources = _adx_plane(config, aks)
        values = adx_values
        install_after.extend(adx_resources)

    _install_platform(config, aks.provider, values, install_after)

    return {
        "resource_group_name": aks.resource_group_name,
        "cluster_name": aks.cluster_name,
        "get_credentials_command": pulumi.Output.concat(
            "az aks get-credentials --admin --subscription ",
            config.subscription_id or "",
            " --resource-group ",
            aks.resource_group_name,
            " --name ",
            aks.cluster_name,
            " --overwrite-existing",
        ),
        "portal_port_forward_command": portal_port_forward_command(),
        "adx_endpoint": adx.uri if adx else None,
        "adx_cluster_name": adx.cluster_name if adx else None,
        "gpu_node_pool_name": gpu.pool_name if gpu else None,
        "gpu_quota": config.gpu_quota if config.enable_gpu else 0,
    }


def _adx_plane(
    config: StackConfig, aks: AksCluster
) -> tuple[AdxMetrics, pulumi.Output[dict], list[pulumi.Resource]]:
    """Identities, their federation and database grants, and the values that wire them in."""

    def identity(name: str, identity_name: str, subjects: tuple[FederatedSubject, ...]):
        return WorkloadIdentity(
            name,
            WorkloadIdentityArgs(
                identity_name=identity_name,
                resource_group_name=aks.resource_group_name,
                location=config.location,
                issuer=aks.oidc_issuer_url,
                subjects=subjects,
            ),
        )

    portal = identity("portal-identity", "taugrid-portal-adx", PORTAL_SUBJECTS)
    adx_mon = identity("adx-mon-identity", "taugrid-adx-mon", ADX_MON_SUBJECTS)
    recorder = (
        identity("lifecycle-recorder-identity", "taugrid-lifecycle-recorder", RECORDER_SUBJECTS)
        if config.enable_lifecycle_recorder
        else None
    )
    grants = [
        *adx_mon_grants(adx_mon.client_id, adx_mon.tenant_id),
        *portal_grants(portal.client_id, portal.tenant_id),
    ]
    if recorder is not None:
        grants.extend(recorder_grants(recorder.client_id, recorder.tenant_id))

    adx = AdxMetrics(
        "adx",
        AdxMetricsArgs(
            cluster_name=config.resolved_adx_cluster_name,
            resource_group_name=aks.resource_group_name,
            location=config.location,
            sku_name=config.adx_sku_name,
            sku_capacity=config.adx_sku_capacity,
            streaming_ingestion_enabled=config.adx_streaming_ingestion_enabled,
            grants=tuple(grants),
            tags=dict(config.tags),
        ),
    )
    values = pulumi.Output.all(
        adx.uri, portal.client_id, recorder.client_id if recorder else None
    ).apply(
        lambda resolved: platform_values(
            config,
            AdxWiring(
                endpoint=resolved[0], portal_client_id=resolved[1], recorder_client_id=resolved[2]
            ),
        )
    )
    identities = [portal, adx_mon, *([recorder] if recorder else [])]
    wiring: list[pulumi.Resource] = [
        *identities,
        *(credential for item in identities for credential in item.credentials),
        *adx.grants,
    ]
    return adx, values, wiring


def _existing_cluster(config: StackConfig) -> dict[str, Any]:
    provider = k8s.Provider(
        "existing-cluster", context=config.kube_context, kubeconfig=config.kubeconfig
    )
    _install_platform(config, provider, platform_values(config), [])
    return {
        "resource_group_name": None,
        "cluster_name": config.cluster_name,
        "get_credentials_command": None,
        "portal_port_forward_command": portal_port_forward_command(config.kube_context),
        "adx_endpoint": None,
        "adx_cluster_name": None,
        "gpu_node_pool_name": None,
        "gpu_quota": config.gpu_quota if config.enable_gpu else 0,
    }

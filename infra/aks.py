"""AksCluster: the resource group, the AKS cluster TauGrid runs on, and a provider for it.

The cluster is shaped for TauGrid's identity model: OIDC issuer and workload identity on (pods
federate to managed identities), managed Entra on with Azure RBAC off by default (TauWorkspace
RoleBindings are what authorize researchers), Standard tier, Azure CNI.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice, resources

SYSTEM_POOL = "system"
MAX_SURGE = "10%"


@dataclass(frozen=True)
class AksClusterArgs:
    resource_group_name: str
    location: str
    cluster_name: str
    tenant_id: pulumi.Input[str]
    kubernetes_version: str | None = None
    admin_group_object_ids: list[str] = field(default_factory=list)
    azure_rbac_enabled: bool = False
    system_node_count: int = 2
    system_vm_size: str = "Standard_D4ds_v6"
    tags: dict[str, str] = field(default_factory=dict)


class AksCluster(pulumi.ComponentResource):
    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    oidc_issuer_url: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(
        self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("taugrid:infra:AksCluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        group = resources.ResourceGroup(
            f"{name}-resource-group",
            resource_group_name=args.resource_group_name,
            location=args.location,
            tags=args.tags,
            # Tags on the group are commonly edited by policy; drift there is not ours to fix.
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(ignore_changes=["tags"])
            ),
        )

        cluster = containerservice.ManagedCluster(
            f"{name}-cluster",
            resource_name_=args.cluster_name,
            resource_group_name=group.name,
            location=group.location,
            dns_prefix=args.cluster_name,
            kubernetes_version=args.kubernetes_version,
            sku=containerservice.ManagedClusterSKUArgs(name="Base", tier="Standard"),
            oidc_issuer_profile=containerservice.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
            security_profile=containerservice.ManagedClusterSecurityProfileArgs(
                workload_identity=containerservice.ManagedClusterSecurityProfileWorkloadIdentityArgs(
                    enabled=True
                )
            ),
            disable_local_accounts=False,
            enable_rbac=True,
            aad_profile=containerservice.ManagedClusterAADProfileArgs(
                managed=True,
                enable_azure_rbac=args.azure_rbac_enabled,
                tenant_id=args.tenant_id,
                admin_group_object_ids=args.admin_group_object_ids,
            ),
            agent_pool_profiles=[
                containerservice.ManagedClusterAgentPoolProfileArgs(
                    name=SYSTEM_POOL,
                    mode="System",
                    os_type="Linux",
                    type="VirtualMachineScaleSets",
                    vm_size=args.system_vm_size,
                    count=args.system_node_count,
                    upgrade_settings=containerservice.AgentPoolUpgradeSettingsArgs(
                        max_surge=MAX_SURGE
                    ),
                )
            ],
            identity=containerservice.ManagedClusterIdentityArgs(type="SystemAssigned"),
            network_profile=containerservice.ContainerServiceNetworkProfileArgs(
                network_plugin="azure", load_balancer_sku="standard"
            ),
            tags=args.tags,
            opts=child,
        )

        credentials = containerservice.list_managed_cluster_admin_credentials_output(
            resource_group_name=group.name,
            resource_name=cluster.name,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        # The admin kubeconfig is a credential: it only ever travels as a Pulumi secret.
        kubeconfig = pulumi.Output.secret(
            credentials.kubeconfigs.apply(lambda kcs: base64.b64decode(kcs[0].value).decode())
        )

        self.resource_group_name = group.name
        self.cluster_name = cluster.name
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(
            lambda profile: profile.issuer_url if profile else ""
        )
        self.kubeconfig = kubeconfig
        self.provider = k8s.Provider(f"{name}-kubernetes", kubeconfig=kubeconfig, opts=child)
        self.register_outputs(
            {
                "resource_group_name": self.resource_group_name,
                "cluster_name": self.cluster_name,
                "oidc_issuer_url": self.oidc_issuer_url,
                "kubeconfig": self.kubeconfig,
            }
        )

"""AdxMetrics: the optional Azure Data Explorer plane Portal, adx-mon and the recorder share.

Each consumer gets the least privilege it needs, granted by identity client ID: Portal reads
(Viewer), the lifecycle recorder writes (Ingestor), adx-mon reconciles schema (Admin).
The cluster's name never changes once deployed: renaming a Kusto cluster replaces it and
loses its data, so later applies ignore name changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import kusto

from infra.config import ADX_DATABASES

SOFT_DELETE_PERIOD = "P7D"
HOT_CACHE_PERIOD = "P1D"

VIEWER = "Viewer"
INGESTOR = "Ingestor"
ADMIN = "Admin"


@dataclass(frozen=True)
class PrincipalGrant:
    """One database role for one managed identity (by client ID, principal type App)."""

    assignment_name: str
    database: str
    role: str
    client_id: pulumi.Input[str]
    tenant_id: pulumi.Input[str]


@dataclass(frozen=True)
class AdxMetricsArgs:
    cluster_name: str
    resource_group_name: pulumi.Input[str]
    location: pulumi.Input[str]
    sku_name: str = "Dev(No SLA)_Standard_D11_v2"
    sku_capacity: int = 1
    streaming_ingestion_enabled: bool = True
    grants: tuple[PrincipalGrant, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)


def sku_tier(sku_name: str) -> str:
    """Dev SKUs ("Dev(No SLA)_…") are the Basic tier; every other SKU is Standard."""
    return "Basic" if sku_name.startswith("Dev(") else "Standard"


class AdxMetrics(pulumi.ComponentResource):
    uri: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    grants: list[kusto.DatabasePrincipalAssignment]

    def __init__(
        self, name: str, args: AdxMetricsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("taugrid:infra:AdxMetrics", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        cluster = kusto.Cluster(
            f"{name}-cluster",
            cluster_name=args.cluster_name,
            resource_group_name=args.resource_group_name,
            location=args.location,
            sku=kusto.AzureSkuArgs(
                name=args.sku_name, tier=sku_tier(args.sku_name), capacity=args.sku_capacity
            ),
            enable_auto_stop=True,
            enable_streaming_ingest=args.streaming_ingestion_enabled,
            tags=args.tags,
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(ignore_changes=["clusterName"])
            ),
        )
        databases = {
            database: kusto.ReadWriteDatabase(
                f"{name}-{database.lower()}",
                database_name=database,
                cluster_name=cluster.name,
                resource_group_name=args.resource_group_name,
                location=args.location,
                kind="ReadWrite",
                soft_delete_period=SOFT_DELETE_PERIOD,
                hot_cache_period=HOT_CACHE_PERIOD,
                opts=child,
            )
            for database in ADX_DATABASES
        }
        self.grants = [
            kusto.DatabasePrincipalAssignment(
                f"{name}-{grant.assignment_name}",
                principal_assignment_name=grant.assignment_name,
                cluster_name=cluster.name,
                database_name=grant.database,
                resource_group_name=args.resource_group_name,
                principal_id=grant.client_id,
                principal_type="App",
                role=grant.role,
                tenant_id=grant.tenant_id,
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(depends_on=[databases[grant.database]])
                ),
            )
            for grant in args.grants
        ]

        self.uri = cluster.uri
        self.cluster_name = cluster.name
        self.register_outputs({"uri": self.uri, "cluster_name": self.cluster_name})


def portal_grants(
    client_id: pulumi.Input[str], tenant_id: pulumi.Input[str]
) -> list[PrincipalGrant]:
    return [
        PrincipalGrant("taugrid-portal-viewer", "Metrics", VIEWER, client_id, tenant_id),
        PrincipalGrant("taugrid-portal-cost-viewer", "CostTracking", VIEWER, client_id, tenant_id),
    ]


def adx_mon_grants(
    client_id: pulumi.Input[str], tenant_id: pulumi.Input[str]
) -> list[PrincipalGrant]:
    return [
        PrincipalGrant(f"taugrid-adx-mon-{database.lower()}", database, ADMIN, client_id, tenant_id)
        for database in ADX_DATABASES
    ]


def recorder_grants(
    client_id: pulumi.Input[str], tenant_id: pulumi.Input[str]
) -> list[PrincipalGrant]:
    return [
        PrincipalGrant(
            "taugrid-lifecycle-recorder-ingestor", "Metrics", INGESTOR, client_id, tenant_id
        )
    ]

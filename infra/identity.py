"""WorkloadIdentity: one user-assigned managed identity federated to exact ServiceAccounts.

A pod gets an Entra token only if its ServiceAccount matches a federated subject exactly
(`system:serviceaccount:<namespace>:<name>`), so each consumer (Portal, adx-mon, the lifecycle
recorder) gets its own identity and only the subjects it runs as. Data-plane roles are granted
separately (AdxMetrics), by the identity's client ID.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import managedidentity

TOKEN_EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"


@dataclass(frozen=True)
class FederatedSubject:
    credential_name: str
    namespace: str
    service_account: str

    @property
    def subject(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"


@dataclass(frozen=True)
class WorkloadIdentityArgs:
    identity_name: str
    resource_group_name: pulumi.Input[str]
    location: pulumi.Input[str]
    issuer: pulumi.Input[str]
    subjects: tuple[FederatedSubject, ...]


class WorkloadIdentity(pulumi.ComponentResource):
    client_id: pulumi.Output[str]
    principal_id: pulumi.Output[str]
    tenant_id: pulumi.Output[str]
    credentials: list[managedidentity.FederatedIdentityCredential]

    def __init__(
        self, name: str, args: WorkloadIdentityArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("taugrid:infra:WorkloadIdentity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        identity = managedidentity.UserAssignedIdentity(
            f"{name}-identity",
            resource_name_=args.identity_name,
            resource_group_name=args.resource_group_name,
            location=args.location,
            opts=child,
        )
        self.credentials = [
            managedidentity.FederatedIdentityCredential(
                f"{name}-{subject.credential_name}",
                federated_identity_credential_resource_name=subject.credential_name,
                resource_name_=identity.name,
                resource_group_name=args.resource_group_name,
                issuer=args.issuer,
                subject=subject.subject,
                audiences=[TOKEN_EXCHANGE_AUDIENCE],
                opts=child,
            )
            for subject in args.subjects
        ]

        self.client_id = identity.client_id
        self.principal_id = identity.principal_id
        self.tenant_id = identity.tenant_id
        self.register_outputs(
            {
                "client_id": self.client_id,
                "principal_id": self.principal_id,
                "tenant_id": self.tenant_id,
            }
        )

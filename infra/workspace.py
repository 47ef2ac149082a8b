"""TauWorkspaceBootstrap: the first Entra-backed workspace, applied after the platform is up.

The object is the one `tau workspace create` writes (workspace-rbac, the researcher role bound
to an Entra group, the `jobqueue` LocalQueue, a created target namespace), built from the
shared `tau.api` model. The stack waits until the controller reports phase Ready, so a
successful `pulumi up` means the workspace is usable, not merely submitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.platform_values import SYSTEM_NAMESPACE
from tau import keys
from tau.api.meta import API_VERSION, ObjectMeta, dump
from tau.api.workspace import (
    RESEARCHER_ROLE,
    KubernetesSubject,
    PrincipalRef,
    Target,
    TauWorkspace,
    TauWorkspaceSpec,
    WorkspaceDefaultsSpec,
)

READY_TIMEOUT_SECONDS = 20 * 60


@dataclass(frozen=True)
class TauWorkspaceBootstrapArgs:
    provider: k8s.Provider
    name: str
    entra_group_object_id: str
    workspace_namespace: str
    platform: pulumi.Resource


def bootstrap_workspace_object(
    name: str, entra_group_object_id: str, workspace_namespace: str
) -> dict[str, Any]:
    workspace = TauWorkspace(
        metadata=ObjectMeta(
            name=name,
            namespace=SYSTEM_NAMESPACE,
            annotations={
                keys.PULUMI_WAIT_FOR: "jsonpath={.status.phase}=Ready",
                keys.PULUMI_TIMEOUT_SECONDS: str(READY_TIMEOUT_SECONDS),
            },
        ),
        spec=TauWorkspaceSpec(
            principal_ref=PrincipalRef(provider="entra", name=entra_group_object_id),
            kubernetes_subject=KubernetesSubject(kind="Group", name=entra_group_object_id),
            role=RESEARCHER_ROLE,
            target=Target(namespace=workspace_namespace, create_namespace=True),
            queue=keys.DEFAULT_QUEUE,
            defaults=WorkspaceDefaultsSpec(
                output_root=f"/data/projects/{name}/runs", priority="normal"
            ),
        ),
    )
    document = dump(workspace)
    document["metadata"] = {
        key: value for key, value in document["metadata"].items() if value not in ({}, [], "", 0)
    }
    return document


class TauWorkspaceBootstrap(pulumi.ComponentResource):
    workspace_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: TauWorkspaceBootstrapArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("taugrid:infra:TauWorkspaceBootstrap", name, None, opts)
        document = bootstrap_workspace_object(
            args.name, args.entra_group_object_id, args.workspace_namespace
        )
        workspace = k8s.apiextensions.CustomResource(
            f"{name}-workspace",
            api_version=API_VERSION,
            kind=document["kind"],
            metadata=document["metadata"],
            spec=document["spec"],
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.provider,
                depends_on=[args.platform],
                # Dropping bootstrap_workspace from the stack stops managing the object; it never
                # deletes a workspace researchers may be running in.
                retain_on_delete=True,
            ),
        )
        self.workspace_name = workspace.id.apply(lambda _: args.name)
        self.register_outputs({"workspace_name": self.workspace_name})

"""TauWorkspace: the platform-authored destination a research repository runs against.

It lives in the system namespace; the controller turns it into a namespace, researcher RBAC,
a Kueue LocalQueue and an optional workload-identity ServiceAccount, and reports readiness.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from tau.api.meta import (
    DNS1123_LABEL,
    INT32_MAX,
    Conditions,
    CrdInfo,
    KubeObject,
    ObservedGeneration,
    PrinterColumn,
    SpecModel,
    StatusModel,
    cel_validations,
)

RESEARCHER_ROLE = "tau-researcher-v1"
AuthorizationMode = Literal["workspace-rbac", "cluster-wide"]
WORKSPACE_RBAC: AuthorizationMode = "workspace-rbac"
CLUSTER_WIDE: AuthorizationMode = "cluster-wide"


class Authorization(SpecModel):
    mode: AuthorizationMode = Field(
        default=WORKSPACE_RBAC,
        description="workspace-rbac binds the researcher subject in the workspace namespace;"
        " cluster-wide means the platform grants researcher access separately.",
    )


PrincipalProvider = Literal["entra", "github"]
SubjectKind = Literal["Group", "User", "ServiceAccount"]


class PrincipalRef(SpecModel):
    provider: PrincipalProvider
    name: str = Field(min_length=1)


class KubernetesSubject(SpecModel):
    kind: SubjectKind
    name: str = Field(min_length=1)


class Target(SpecModel):
    namespace: str | None = Field(
        default=None,
        max_length=63,
        pattern=DNS1123_LABEL,
        description="Workload namespace; the workspace name when empty.",
    )
    create_namespace: bool = False


class WorkspaceDefaultsSpec(SpecModel):
    output_root: str | None = Field(default=None, min_length=1)
    priority: Literal["default", "priority", "normal"] | None = None
    ttl_seconds_after_finished: int | None = Field(
        default=None, ge=600, le=INT32_MAX, json_schema_extra={"format": "int64"}
    )


class WorkloadIdentity(SpecModel):
    service_account_name: str = Field(min_length=1)
    client_id: str = Field(min_length=1)


AUTHORIZATION_RULE = {
    "rule": "(has(self.authorization) && self.authorization.mode == 'cluster-wide')"
    " ? (!has(self.principalRef) && !has(self.kubernetesSubject) && !has(self.role))"
    " : (has(self.principalRef) && has(self.kubernetesSubject) && has(self.role))",
    "message": "authorization.mode cluster-wide forbids principalRef, kubernetesSubject and role;"
    " workspace-rbac requires all three",
}


class TauWorkspaceSpec(SpecModel):
    model_config = ConfigDict(json_schema_extra=cel_validations([AUTHORIZATION_RULE]))

    authorization: Authorization = Field(
        default_factory=Authorization, json_schema_extra={"default": {}}
    )
    principal_ref: PrincipalRef | None = None
    kubernetes_subject: KubernetesSubject | None = None
    role: Literal["tau-researcher-v1"] | None = None
    target: Target = Field(default_factory=Target)
    queue: str | None = Field(
        default=None, min_length=1, description="LocalQueue; the TauCluster default when empty."
    )
    defaults: WorkspaceDefaultsSpec | None = None
    workload_identity: WorkloadIdentity | None = None

    @model_validator(mode="after")
    def _authorization(self) -> TauWorkspaceSpec:
        declared = [self.principal_ref, self.kubernetes_subject, self.role]
        if self.authorization.mode == CLUSTER_WIDE:
            ok = all(item is None for item in declared)
        else:
            ok = all(item is not None for item in declared)
        if not ok:
            raise ValueError(AUTHORIZATION_RULE["message"])
        return self


class ResolvedTarget(StatusModel):
    resolved_namespace: str | None = None
    # The namespace's pod-security.kubernetes.io/enforce level; `tau run` renders restricted
    # pods when it is `restricted` (researchers cannot read Namespaces).
    pod_security: str | None = None


class ResolvedQueue(StatusModel):
    local_queue: str | None = None
    cluster_queue: str | None = None


class TauWorkspaceStatus(StatusModel):
    phase: Literal["Pending", "Ready", "Degraded"] | None = None
    observed_generation: ObservedGeneration = None
    target: ResolvedTarget | None = None
    queue: ResolvedQueue | None = None
    conditions: Conditions = None


class TauWorkspace(KubeObject):
    crd = CrdInfo(
        kind="TauWorkspace",
        plural="workspaces",
        singular="workspace",
        short_names=("tw",),
        scope="Namespaced",
        columns=(
            PrinterColumn("Phase", ".status.phase"),
            PrinterColumn("Namespace", ".status.target.resolvedNamespace"),
            PrinterColumn("Queue", ".spec.queue"),
        ),
    )

    kind: str = "TauWorkspace"
    spec: TauWorkspaceSpec = Field(default_factory=TauWorkspaceSpec)
    status: TauWorkspaceStatus | None = None

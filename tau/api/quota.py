"""TauQuotaRequest: a researcher's request for more quota, decided by the platform.

Decisions are annotations only platform actors may set (the chart's admission policy guards
them); the controller reports the decision and never mutates Kueue quota itself.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tau.api.meta import (
    Conditions,
    CrdInfo,
    KubeObject,
    ObservedGeneration,
    PrinterColumn,
    SpecModel,
    StatusModel,
)


class TauQuotaRequestSpec(SpecModel):
    workspace: str = Field(min_length=1)
    resource: str = Field(min_length=1, description="Resource name, e.g. nvidia.com/gpu.")
    requested: int = Field(ge=1, json_schema_extra={"format": "int64"})
    reason: str = Field(min_length=1)
    mutation_mode: Literal["ReportOnly"] = Field(
        default="ReportOnly", description="Approval is reported; quota changes go through GitOps."
    )


class TauQuotaRequestStatus(StatusModel):
    phase: Literal["PendingApproval", "Approved", "Rejected", "Expired"] | None = None
    observed_generation: ObservedGeneration = None
    decision: str | None = None
    approved_by: str | None = None
    conditions: Conditions = None


class TauQuotaRequest(KubeObject):
    crd = CrdInfo(
        kind="TauQuotaRequest",
        plural="quotarequests",
        singular="quotarequest",
        short_names=("tqr",),
        scope="Namespaced",
        columns=(
            PrinterColumn("Workspace", ".spec.workspace"),
            PrinterColumn("Resource", ".spec.resource"),
            PrinterColumn("Requested", ".spec.requested", "integer"),
            PrinterColumn("Phase", ".status.phase"),
        ),
    )

    kind: str = "TauQuotaRequest"
    spec: TauQuotaRequestSpec
    status: TauQuotaRequestStatus | None = None

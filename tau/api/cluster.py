"""TauCluster: the cluster-scoped singleton `cluster` that publishes node labels and profiles.

Platform teams declare node label rules and workload profiles here; the controller observes
(or, in Reconcile mode, applies) node labels and resolves every profile against live Kueue
objects into status, which `tau` trusts fail-closed (see `tau.profiles`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from tau import keys
from tau.api.meta import (
    DNS1123_SUBDOMAIN,
    INT32_MAX,
    Conditions,
    CrdInfo,
    KubeObject,
    ObservedGeneration,
    PrinterColumn,
    SpecModel,
    StatusModel,
    cel_validations,
    list_map,
    list_set,
)

SINGLETON_NAME = "cluster"

ManagementMode = Literal["Observe", "Reconcile"]
Mode = Literal["fixed", "elastic"]
Placement = Literal["independent", "single-node-nvlink", "multi-node-nccl"]
ExecutionTarget = Literal["singleCluster", "multiKueue"]
PROFILE_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
MULTI_NODE_PLACEMENT = "multi-node-nccl"
MULTIKUEUE_TARGET = "multiKueue"

_SHORT = 253  # bound every string a CEL rule reads, so the apiserver can cost the rule


class NodeLabelMatch(SpecModel):
    vm_sizes: list[str] | None = Field(
        default=None,
        description="Azure VM sizes (node.kubernetes.io/instance-type); empty matches every node.",
        json_schema_extra=list_set(),
    )


class NodeLabelRule(SpecModel):
    match: NodeLabelMatch = Field(default_factory=NodeLabelMatch, json_schema_extra={"default": {}})
    labels: dict[str, str] = Field(
        description="Labels every matching node must carry.", json_schema_extra={"minProperties": 1}
    )


class NodeSpec(SpecModel):
    selector: dict[str, str] | None = Field(
        default=None, description="Only nodes carrying all of these labels are considered."
    )
    label_rules: list[NodeLabelRule] | None = Field(
        default=None, json_schema_extra={"x-kubernetes-list-type": "atomic"}
    )


class NamedRef(SpecModel):
    name: str = Field(min_length=1)


class SharedLocalQueue(SpecModel):
    namespace: str = Field(min_length=1)
    name: str = Field(min_length=1)


class QueueSpec(SpecModel):
    ownership: Literal["External", "Adopt", "Manage"] = "External"
    topology: NamedRef | None = None
    resource_flavors: list[NamedRef] | None = Field(
        default=None, json_schema_extra=list_map("name")
    )
    cluster_queues: list[NamedRef] | None = Field(default=None, json_schema_extra=list_map("name"))
    shared_local_queues: list[SharedLocalQueue] | None = Field(
        default=None,
        description="Platform LocalQueues that globally applicable profiles resolve to.",
        json_schema_extra=list_map("namespace", "name"),
    )


class WorkspaceDefaults(SpecModel):
    default_queue: str = Field(
        default=keys.DEFAULT_QUEUE,
        description="Queue of TauWorkspaces that leave spec.queue empty.",
    )


class Applicability(SpecModel):
    """Who may select a profile; an empty list means everyone."""

    teams: list[str] | None = Field(
        default=None, max_length=256, json_schema_extra={**list_set(), "x-items": {"maxLength": 63}}
    )
    lanes: list[str] | None = Field(
        default=None, max_length=256, json_schema_extra={**list_set(), "x-items": {"maxLength": 63}}
    )
    namespaces: list[str] | None = Field(
        default=None,
        max_length=256,
        json_schema_extra={**list_set(), "x-items": {"maxLength": 253}},
    )


class Priorities(SpecModel):
    """Priority class names, or disableDefaultPriorities to render none."""

    workload_priority_class_name: str | None = Field(default=None, min_length=1, max_length=253)
    pod_priority_class_name: str | None = Field(default=None, min_length=1, max_length=253)
    disable_default_priorities: bool | None = None


class WorkloadProfileFields(SpecModel):
    """The platform-owned intent of one workload shape (no quota, flavors or topology names:
    those are observations the controller resolves into status)."""

    name: str = Field(min_length=1, max_length=_SHORT, pattern=PROFILE_NAME_PATTERN)
    description: str | None = None
    applicability: Applicability | None = None
    gpus_per_worker: int = Field(ge=0, le=INT32_MAX, json_schema_extra={"format": "int32"})
    worker_count: int = Field(ge=1, le=INT32_MAX, json_schema_extra={"format": "int32"})
    mode: Mode
    placement: Placement
    default_local_queue: str = Field(min_length=1, max_length=_SHORT, pattern=DNS1123_SUBDOMAIN)
    execution_target: ExecutionTarget = "singleCluster"
    priorities: Priorities | None = None


# CEL rules mirrored by `WorkloadProfile._check` for offline validation.
PROFILE_RULES = [
    {
        "rule": "self.workerCount <= 1 || self.placement == 'multi-node-nccl'",
        "message": "workerCount > 1 requires placement multi-node-nccl",
    },
    {
        "rule": "self.executionTarget != 'multiKueue' || (has(self.applicability)"
        " && has(self.applicability.teams) && size(self.applicability.teams) > 0"
        " && has(self.applicability.namespaces) && size(self.applicability.namespaces) > 0)",
        "message": "executionTarget multiKueue requires applicability.teams and"
        " applicability.namespaces",
    },
    {
        "rule": "has(self.priorities) && ((has(self.priorities.disableDefaultPriorities)"
        " && self.priorities.disableDefaultPriorities)"
        " ? (!has(self.priorities.workloadPriorityClassName)"
        " && !has(self.priorities.podPriorityClassName))"
        " : (has(self.priorities.workloadPriorityClassName)"
        " && has(self.priorities.podPriorityClassName)))",
        "message": "priorities.workloadPriorityClassName and priorities.podPriorityClassName are"
        " required unless priorities.disableDefaultPriorities is true, and must be absent when"
        " it is",
    },
]


class WorkloadProfile(WorkloadProfileFields):
    model_config = ConfigDict(json_schema_extra=cel_validations(PROFILE_RULES))

    @model_validator(mode="after")
    def _check(self) -> WorkloadProfile:
        problems = profile_rule_problems(self)
        if problems:
            raise ValueError("; ".join(problems))
        return self


def profile_rule_problems(profile: WorkloadProfileFields) -> list[str]:
    """The structural rules the API server enforces with CEL, as messages."""
    problems = []
    if profile.worker_count > 1 and profile.placement != MULTI_NODE_PLACEMENT:
        problems.append(PROFILE_RULES[0]["message"])
    if profile.execution_target == MULTIKUEUE_TARGET:
        scope = profile.applicability
        if scope is None or not scope.teams or not scope.namespaces:
            problems.append(PROFILE_RULES[1]["message"])
    names = profile.priorities or Priorities()
    both = names.workload_priority_class_name and names.pod_priority_class_name
    either = names.workload_priority_class_name or names.pod_priority_class_name
    if (names.disable_default_priorities and either) or (
        not names.disable_default_priorities and not both
    ):
        problems.append(PROFILE_RULES[2]["message"])
    return problems


class TauClusterSpec(SpecModel):
    management_mode: ManagementMode = Field(
        default="Observe", description="Observe never mutates nodes; Reconcile applies labels."
    )
    deletion_policy: Literal["Retain", "DeleteManaged"] = "Retain"
    nodes: NodeSpec | None = None
    queues: QueueSpec | None = None
    workspace_defaults: WorkspaceDefaults = Field(
        default_factory=WorkspaceDefaults, json_schema_extra={"default": {}}
    )
    workload_profiles: list[WorkloadProfile] | None = Field(
        default=None, max_length=256, json_schema_extra=list_map("name")
    )


class Counts(StatusModel):
    observed: int = Field(default=0, json_schema_extra={"format": "int32"})
    ready: int = Field(default=0, json_schema_extra={"format": "int32"})
    drifted: int = Field(default=0, json_schema_extra={"format": "int32"})


class ManagedResource(StatusModel):
    api_version: str
    kind: str
    namespace: str | None = None
    name: str
    uid: str | None = None
    ownership: str


class ResolvedLocalQueue(StatusModel):
    namespace: str
    name: str
    cluster_queue: str = ""


class ResolvedWorkloadProfile(WorkloadProfileFields):
    """A profile's normalized intent plus the Kueue and scheduling identities it resolved to."""

    model_config = ConfigDict(extra="ignore")

    local_queues: list[ResolvedLocalQueue] | None = None
    cluster_queues: list[str] | None = None
    resource_flavors: list[str] | None = None
    flavor_gpu_classes: dict[str, str] | None = Field(
        default=None,
        description=f"The {keys.GPU_CLASS} node label of each of resourceFlavors that "
        "carries one, so a run's policy.gpu_class can be checked against the profile's queue. "
        "Not part of profileSetHash (upstream publishes no such field).",
    )
    topologies: list[str] | None = None
    workload_priority_classes: list[str] | None = None
    pod_priority_classes: list[str] | None = None
    conditions: Conditions = None


class ProfileSetStatus(StatusModel):
    observed_generation: ObservedGeneration = None
    observed: int = Field(default=0, json_schema_extra={"format": "int32"})
    ready: int = Field(default=0, json_schema_extra={"format": "int32"})
    drifted: int = Field(default=0, json_schema_extra={"format": "int32"})
    profile_set_hash: str | None = None
    profiles: list[ResolvedWorkloadProfile] | None = Field(
        default=None, json_schema_extra=list_map("name")
    )


class TauClusterStatus(StatusModel):
    phase: Literal["Pending", "Ready", "Degraded"] | None = None
    observed_generation: ObservedGeneration = None
    desired_state_hash: str | None = None
    nodes: Counts | None = None
    queues: Counts | None = None
    workload_profiles: ProfileSetStatus | None = None
    managed_resources: list[ManagedResource] | None = None
    conditions: Conditions = None


class TauCluster(KubeObject):
    crd = CrdInfo(
        kind="TauCluster",
        plural="clusters",
        singular="cluster",
        short_names=("tc",),
        scope="Cluster",
        columns=(
            PrinterColumn("Mode", ".spec.managementMode"),
            PrinterColumn("Phase", ".status.phase"),
        ),
    )

    kind: str = "TauCluster"
    spec: TauClusterSpec = Field(default_factory=TauClusterSpec)
    status: TauClusterStatus | None = None

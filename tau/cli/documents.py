"""The documents `tau run` read verbs print with `-o json|yaml`, as pydantic models.

A model per document is its contract and its JSON Schema (`Model.model_json_schema()`):
json and yaml print the same validated document, and a key a producer adds without adding
it here fails the unit tests instead of silently changing what scripts parse. The capability
packages (tau/lifecycle, tau/engine) build plain data; the CLI validates it into these models
on the way out. Keys keep their historic camelCase spelling; a key a producer omits stays
omitted (documents are dumped with `exclude_unset`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from tau.jsontypes import JSONObject


class Document(BaseModel):
    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, populate_by_name=True, defer_build=True
    )

    def dump(self) -> JSONObject:
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


# --- tau run list ----------------------------------------------------------------------------


class RunRow(Document):
    name: str = ""
    kind: str = ""
    status: str = ""
    created: str = ""
    age: str = ""
    run_id: str = ""
    queue: str = ""
    namespace: str = ""
    cluster: str = ""
    resource_uid: str = ""
    durable_id: str = ""
    source: str = ""
    experiment_tracking: bool = False
    experiment_path: str = ""
    execution_target: str = ""


class RunList(Document):
    namespace: str = ""
    total: int = 0
    runs: list[RunRow] = []
    history_state: str = ""


# --- shared parts ----------------------------------------------------------------------------


class Failure(Document):
    """A failed run's classification (`tau.run.failures.Cause`), as retry and resume see it."""

    reason: str = ""
    category: str = ""
    owner: str = ""
    summary: str = ""
    hint: str = ""
    retryable: bool = False


class Command(Document):
    """A command the researcher can paste: its argv, the env it needs, and both as one line."""

    argv: list[str] = []
    env: dict[str, str] = {}
    shell: str = ""


# --- tau run history -------------------------------------------------------------------------


class HistoryEntry(Document):
    time: str = ""
    event: str = ""
    attempt: str = ""
    failure: str = ""
    message: str = ""


class RunHistory(Document):
    name: str = ""
    namespace: str = ""
    found: bool = False
    state: str = ""
    display_state: str = ""
    failure: Failure | None = None
    submission_id: str = ""
    created: str = ""
    attempt: int = 0
    resumed_from: str = ""
    entries: list[HistoryEntry] = []


# --- tau run get -----------------------------------------------------------------------------


class RunResults(Document):
    path: str = ""
    pvc: str = ""
    directory: bool = False
    entries: list[str] = []
    checkpoint: str = ""
    content: str = ""
    published: bool | None = None


# --- tau run status --------------------------------------------------------------------------


class StatusMetadata(Document):
    name: str = ""
    namespace: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}


class PhaseRow(Document):
    name: str = ""
    status: str = ""
    detail: str = ""
    hint: str = ""
    owner: str = ""
    started_at: str = ""


class Diagnostic(Document):
    code: str = ""
    severity: str = ""
    message: str = ""
    suggestion: str = ""
    commands: list[Command] = []


class Action(Document):
    name: str = ""
    description: str = ""
    command: Command = Command()


class StatusSummary(Document):
    found: bool = False
    workload_kind: str = ""
    state: str = ""
    display_state: str = ""
    startup_complete: bool = False
    startup_failed: bool = False


class JobStatus(Document):
    found: bool = False
    uid: str = ""
    created_at: str = ""
    started_at: str = ""
    finished_at: str = ""
    suspended: bool = False
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    parallelism: int = 0
    managed_by: str = ""
    conditions: list[JSONObject] = []


class PodRow(Document):
    name: str = ""
    phase: str = ""
    node: str = ""
    ready: bool = False
    restarts: int = 0
    reason: str = ""
    # A local run's attempt is a process on this machine, not a pod.
    pid: int | None = None
    exit_code: int | None = None


class ResourceClaimRow(Document):
    name: str = ""
    allocated: bool = False


class EventRow(Document):
    type: str = ""
    reason: str = ""
    object: str = ""
    message: str = ""
    last_timestamp: str = ""


class RayJobStatus(Document):
    found: bool = False
    uid: str = ""
    created_at: str = ""
    started_at: str = ""
    finished_at: str = ""
    ray_cluster_name: str = ""
    job_id: str = ""
    job_deployment_status: str = ""
    job_status: str = ""
    reason: str = ""
    message: str = ""


class RunStatus(Document):
    """The RunStatus document of a cluster or a local run (same shape, local phases)."""

    api_version: str = ""
    kind: str = ""
    metadata: StatusMetadata = StatusMetadata()
    status: StatusSummary = StatusSummary()
    failure: Failure | None = None
    phases: list[PhaseRow] = []
    job: JobStatus = JobStatus()
    workloads: list[JSONObject] = []
    pods: list[PodRow] = []
    resource_claims: list[ResourceClaimRow] = []
    events: list[EventRow] = []
    diagnostics: list[Diagnostic] = []
    actions: list[Action] = []
    ray_job: RayJobStatus | None = None
    metrics: JSONObject | None = None
    profile: list[JSONObject] | None = None

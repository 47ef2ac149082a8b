"""Shared building blocks of the tau.azure.com API: field naming, conditions, CRD metadata.

Models use snake_case in Python and camelCase on the wire (the Kubernetes convention), so
every model is read with `model_validate(obj)` and written with `dump(model)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic.alias_generators import to_camel

from tau import keys

GROUP = keys.API_GROUP
VERSION = keys.API_VERSION
API_VERSION = keys.TAU_API_VERSION

# Validation patterns shared by several kinds (Kubernetes' own definitions).
DNS1123_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS1123_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
INT32_MAX = 2147483647


def k8s(**extensions: Any) -> dict[str, Any]:
    """OpenAPI extensions for one field, spelled the way the CRD schema needs them."""
    return {key.replace("_", "-"): value for key, value in extensions.items()}


def cel_validations(rules: list[dict[str, str]]) -> dict[str, JsonValue]:
    """A model's `x-kubernetes-validations`; the rules stay string dicts so the offline
    checks that mirror them can quote their messages."""
    return {"x-kubernetes-validations": [{**rule} for rule in rules]}


def list_set() -> dict[str, Any]:
    return {"x-kubernetes-list-type": "set"}


def list_map(*keys: str) -> dict[str, Any]:
    return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(keys)}


class SpecModel(BaseModel):
    """A desired-state model: unknown fields are errors, so typos never pass silently."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        use_enum_values=True,
        defer_build=True,
    )


class StatusModel(BaseModel):
    """An observed-state model: tolerant of fields newer controllers may add."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", defer_build=True
    )


def dump(model: BaseModel) -> dict[str, Any]:
    """Wire form: camelCase keys, unset optional fields omitted (Go's `omitempty`)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


ConditionStatus = Literal["True", "False", "Unknown"]


class Condition(StatusModel):
    """A Kubernetes-style condition (metav1.Condition)."""

    type: str = Field(min_length=1, max_length=316)
    status: ConditionStatus
    observed_generation: int | None = Field(
        default=None, ge=0, json_schema_extra={"format": "int64"}
    )
    last_transition_time: str = Field(json_schema_extra={"format": "date-time"})
    reason: str = Field(min_length=1, max_length=1024)
    message: str = Field(default="", max_length=32768)


# Every status reports these two the same way; declare them as `= None` fields.
ObservedGeneration = Annotated[int | None, Field(json_schema_extra={"format": "int64"})]
Conditions = Annotated[list[Condition] | None, Field(json_schema_extra=list_map("type"))]


def now_rfc3339() -> str:
    return datetime.now(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


class ObjectMeta(BaseModel):
    """The metadata fields TauGrid reads; everything else is kept verbatim."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", defer_build=True
    )

    name: str = ""
    namespace: str | None = None
    uid: str | None = None
    generation: int = 0
    resource_version: str | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    finalizers: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class PrinterColumn:
    name: str
    json_path: str
    type: str = "string"


@dataclass(frozen=True)
class CrdInfo:
    """How a kind is served: names, scope and the columns `kubectl get` prints."""

    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    scope: Literal["Cluster", "Namespaced"]
    columns: tuple[PrinterColumn, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return f"{self.plural}.{GROUP}"


class KubeObject(BaseModel):
    """A whole custom object: apiVersion, kind, metadata, spec and status."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", defer_build=True
    )

    crd: ClassVar[CrdInfo]

    api_version: str = API_VERSION
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

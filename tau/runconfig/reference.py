"""Generated views of the models: the JSON Schema and the `explain-config` field reference.

Both are derived from the pydantic models and their `spec(...)` metadata, so the schema, the
docs and validation cannot disagree.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from tau.runconfig import catalog
from tau.runconfig.catalog import FieldEntry

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://github.com/Azure/taugrid/cli/schemas/tau-run-config.schema.json"
SCHEMA_TITLE = "Tau direct run config"
SCOPE = (
    "It covers direct `tau run --config` files (hand-written `tau.yaml` and `tau/<target>.yaml`). "
    "SDK-generated managed workflow manifests (`schema_version` without an engine) are parsed "
    "permissively and are outside this reference, except fields marked workflow-only."
)


def json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the direct run config."""
    from tau.runconfig.models import RunConfig

    body = _object(RunConfig)
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        "title": SCHEMA_TITLE,
        "description": "Generated from tau.runconfig models. " + SCOPE,
        **body,
    }


def _object(model: type[BaseModel]) -> dict[str, Any]:
    properties = {}
    for name, info in model.model_fields.items():
        entry = FieldEntry(name, info, info.annotation, catalog.nested_model(info.annotation))
        properties[name] = _property(entry)
    return {"type": "object", "properties": properties, "additionalProperties": False}


def _property(entry: FieldEntry) -> dict[str, Any]:
    schema = _type_schema(entry.annotation, entry)
    if entry.info.description:
        schema["description"] = entry.info.description
    schema["x-tau-status"] = entry.status
    if entry.notes:
        schema["x-tau-notes"] = entry.notes
    default = entry.default_text
    if default is not None:
        schema["default"] = default
    return schema


def _strip_optional(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _strip_optional(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007
    return annotation


_SCALARS = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _type_schema(annotation: Any, entry: FieldEntry | None = None) -> dict[str, Any]:
    extra = entry.extra if entry else {}
    if "x-tau-json-type" in extra:
        json_type = extra["x-tau-json-type"]
        if isinstance(json_type, list):
            json_type = [t for t in json_type if t != "null"]
        return {"type": json_type}
    annotation = _strip_optional(annotation)
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _object(annotation)
    if origin is list:
        (item,) = typing.get_args(annotation)
        items = _type_schema(item)
        if entry is not None:
            items.update(_enumeration(entry))
        return {"type": "array", "items": items}
    if origin is dict:
        _, value = typing.get_args(annotation)
        if value is Any:
            return {"type": "object", "additionalProperties": True}
        return {"type": "object", "additionalProperties": _type_schema(value)}
    if origin in (typing.Union, types.UnionType):
        return {"type": [_SCALARS[a] for a in typing.get_args(annotation)]}
    schema: dict[str, Any] = {"type": _SCALARS[annotation]}
    if entry is not None:
        schema.update(_enumeration(entry))
    return schema


def _enumeration(entry: FieldEntry) -> dict[str, Any]:
    values, aliases = entry.values, entry.aliases
    if not values:
        return {}
    if not aliases:
        return {"enum": values}
    return {
        "oneOf": [
            {"enum": values},
            {
                "enum": sorted(aliases),
                "deprecated": True,
                "description": "Deprecated aliases: "
                + ", ".join(f"{a} -> {c}" for a, c in sorted(aliases.items())),
            },
        ]
    }


@dataclass(frozen=True)
class Row:
    path: str
    type: str
    status: str
    description: str
    default: str | None
    values: list[str]
    notes: str

    @property
    def details(self) -> str:
        parts = [f"type: {self.type}"]
        if self.values:
            parts.append("values: " + ", ".join(self.values))
        if self.default is not None:
            parts.append(f"default: {self.default}")
        if self.notes:
            parts.append(self.notes)
        return "; ".join(parts)


def type_name(annotation: Any, extra: dict[str, Any] | None = None) -> str:
    extra = extra or {}
    json_type = extra.get("x-tau-json-type")
    if json_type == ["string", "integer", "number", "null"]:
        return "quantity"
    annotation = _strip_optional(annotation)
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    if origin is list:
        (item,) = typing.get_args(annotation)
        return f"list of {type_name(item)}"
    if origin is dict:
        _, value = typing.get_args(annotation)
        return "map" if value is Any else f"map of {type_name(value)}"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in typing.get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    return _SCALARS.get(annotation, "any")


def rows() -> list[Row]:
    result = []
    for entry in sorted(catalog.entries(), key=lambda e: e.path):
        values = entry.values + [f"{a} (deprecated)" for a in sorted(entry.aliases)]
        result.append(
            Row(
                path=entry.path,
                type=type_name(entry.annotation, entry.extra),
                status=entry.status,
                description=entry.info.description or "",
                default=entry.default_text,
                values=values,
                notes=entry.notes,
            )
        )
    return result


def markdown() -> str:
    lines = [
        "# Tau run config reference",
        "",
        "Generated from the `tau.runconfig` models, the same source `tau run validate` and "
        "`tau run schema` use.",
        "",
        SCOPE,
        "",
        "Status: `supported`; `reserved` (accepted, not wired); `workflow-only` (managed "
        "manifests only); `direct-only` (direct Job/RayJob configs only).",
        "",
        "| Field | Status | Description | Values / defaults |",
        "|---|---|---|---|",
    ]
    for row in rows():
        details = row.details.replace("|", "\\|")
        lines.append(f"| `{row.path}` | {row.status} | {row.description} | {details} |")
    return "\n".join(lines) + "\n"

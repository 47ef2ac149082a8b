"""The field catalog: every dotted path of the direct run config with its metadata.

One walk over the pydantic models feeds unknown-key suggestions, the managed manifest's
known-key check, `tau run schema` and `tau run explain-config`.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo


@dataclass(frozen=True)
class FieldEntry:
    path: str
    info: FieldInfo
    annotation: Any
    model: type[BaseModel] | None  # the nested block, for groups

    @property
    def extra(self) -> dict[str, Any]:
        extra = self.info.json_schema_extra
        return extra if isinstance(extra, dict) else {}

    @property
    def status(self) -> str:
        status: str = self.extra.get("x-tau-status", "supported")
        return status

    @property
    def values(self) -> list[str]:
        return list(self.extra.get("x-tau-values", []))

    @property
    def aliases(self) -> dict[str, str]:
        return dict(self.extra.get("x-tau-aliases", {}))

    @property
    def notes(self) -> str:
        notes: str = self.extra.get("x-tau-notes", "")
        return notes

    @property
    def default_text(self) -> str | None:
        if "x-tau-default" in self.extra:
            text: str | None = self.extra["x-tau-default"]
            return text
        default = self.info.default
        if default is None or self.model is not None:
            return None
        if isinstance(default, bool):
            return "true" if default else "false"
        return str(default)


def nested_model(annotation: Any) -> type[BaseModel] | None:
    """The BaseModel inside `X | None` or `list[X] | None`, if any."""
    for arg in _flatten(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _flatten(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _flatten(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list):
        return [a for arg in typing.get_args(annotation) for a in _flatten(arg)]
    return [annotation]


def walk(model: type[BaseModel], prefix: str = "") -> list[FieldEntry]:
    entries: list[FieldEntry] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{name}"
        child = nested_model(info.annotation)
        entries.append(FieldEntry(path, info, info.annotation, child))
        if child is not None:
            entries.extend(walk(child, f"{path}."))
    return entries


@functools.cache
def entries() -> tuple[FieldEntry, ...]:
    from tau.runconfig.models import RunConfig

    return tuple(walk(RunConfig))


@functools.cache
def paths() -> frozenset[str]:
    return frozenset(entry.path for entry in entries())


def entry(path: str) -> FieldEntry | None:
    return next((e for e in entries() if e.path == path), None)

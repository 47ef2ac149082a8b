"""Where every resolved run setting came from.

"Dry-run output must keep default sources visible": a researcher looking at a rendered Job
must be able to tell whether its queue came from their tau.yaml, the TauWorkspace, the
workload profile, a flag or a built-in default, and therefore who to ask to change it.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar, Union, get_args, get_origin

from pydantic import BaseModel

from tau import credentials
from tau.runconfig.models import RunConfig


class Layer(StrEnum):
    """The layers of §4.1, lowest precedence first, plus defaults and placeholders."""

    DEFAULT = "built-in default"
    DISCOVERY = "discovery"
    DESCRIPTOR = "connection descriptor"
    WORKSPACE = "workspace default"
    PROFILE = "profile"
    FILE = "file"
    ENV = "environment"
    FLAG = "CLI flag"
    DERIVED = "derived"
    UNRESOLVED = "unresolved"


T = TypeVar("T")


@dataclass(frozen=True)
class Source:
    layer: Layer
    detail: str = ""

    def __str__(self) -> str:
        if self.layer is Layer.FILE:
            return self.detail
        return f"{self.layer.value} ({self.detail})" if self.detail else self.layer.value


@dataclass(frozen=True)
class Resolved:
    value: object
    source: Source


@dataclass
class Provenance:
    """An ordered record: setting name → resolved value and its source."""

    entries: dict[str, Resolved] = field(default_factory=dict)

    def record(self, name: str, value: T, source: Source) -> T:
        self.entries[name] = Resolved(value, source)
        return value

    def source_of(self, name: str) -> Source | None:
        entry = self.entries.get(name)
        return entry.source if entry else None

    def value_of(self, name: str) -> object:
        entry = self.entries.get(name)
        return entry.value if entry else None

    def rows(self) -> list[tuple[str, str, str]]:
        return [
            (name, _display(entry.value), str(entry.source)) for name, entry in self.entries.items()
        ]

    def as_json(self) -> list[dict[str, str]]:
        return [
            {"setting": name, "value": value, "source": source}
            for name, value, source in self.rows()
        ]


def field_path(block: type[BaseModel], name: str, *keys: str) -> str:
    """The run-config path of `block`'s field `name` as the researcher writes it
    (`Policy`, "queue" → `policy.queue`; a mapping entry's key appended).

    Derived from the `RunConfig` model tree, so a source names exactly the field the loader
    placed in the file and a renamed field fails here, not in a message.
    """
    if name not in block.model_fields:
        raise KeyError(f"{block.__name__} has no field {name!r}")
    return ".".join(filter(None, (_prefixes()[block], name, *keys)))


@functools.cache
def _prefixes() -> dict[type[BaseModel], str]:
    """Each block model of the run config → its dotted place; every block sits in one place."""
    found: dict[type[BaseModel], str] = {RunConfig: ""}

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            for block in _models(info.annotation):
                if block in found:
                    raise TypeError(f"{block.__name__} sits at two run-config paths")
                found[block] = f"{prefix}{name}"
                walk(block, f"{prefix}{name}.")

    walk(RunConfig, "")
    return found


def _models(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if get_origin(annotation) in (Union, types.UnionType):
        return [model for arg in get_args(annotation) for model in _models(arg)]
    return []


def format_table(rows: list[tuple[str, str, str]], *, max_value: int = 48) -> str:
    """A compact three-column table for stderr (stdout stays machine-readable)."""
    header = ("SETTING", "VALUE", "SOURCE")
    shown = []
    for name, raw, source in rows:
        # Redacted before cutting: a token cut to 48 characters no longer looks like one.
        value = (
            credentials.REDACTED if credentials.is_secret_name(name) else credentials.redact(raw)
        )
        value = value if len(value) <= max_value else value[: max_value - 1] + "…"
        shown.append((name, value, source))
    widths = [max(len(row[i]) for row in [header, *shown]) for i in range(2)]
    lines = [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}".rstrip() for a, b, c in [header, *shown]]
    return "\n".join(lines) + "\n"


def _display(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ",".join(
            f"{k}={credentials.REDACTED if credentials.is_secret_name(str(k)) else v}"
            for k, v in value.items()
        )
    if isinstance(value, list | tuple):
        return ",".join(str(item) for item in value)
    return str(value)

"""Registry names and references: the segment rules and the `NAME@TOKEN` / `MODEL:ALIAS` forms.

Every name becomes a directory on the shared data PVC and often a label value, so the rule
is strict and the same everywhere: lowercase letters and digits with internal hyphens.
Dataset versions may also contain dots (`2025.01`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tau.errors import UsageError

SEGMENT = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
VERSION = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$")
MAX_SEGMENT = 63
# The alias a bare dataset name resolves through, and the one a bare model name does.
DATASET_DEFAULT_ALIAS = "latest"
MODEL_DEFAULT_ALIAS = "default"
# `dataset:NAME[@VERSION|@ALIAS]`: how a run config points at a registered dataset.
DATASET_SCHEME = "dataset:"


def segment(kind: str, value: str) -> str:
    if not value:
        raise UsageError(f"{kind} is required")
    if len(value) > MAX_SEGMENT or not SEGMENT.match(value):
        raise UsageError(
            f"{kind} {value!r} is invalid: use lowercase letters, digits and internal hyphens "
            f'(at most {MAX_SEGMENT} characters, e.g. "fineweb-edu")'
        )
    return value


def version(value: str) -> str:
    if not value:
        raise UsageError("version is required")
    if len(value) > MAX_SEGMENT or not VERSION.match(value) or ".." in value:
        raise UsageError(
            f"version {value!r} is invalid: use lowercase letters, digits and internal hyphens "
            'or dots (e.g. "2025.01")'
        )
    return value


@dataclass(frozen=True)
class DatasetRef:
    """`NAME` (alias latest), `NAME@VERSION` or `NAME@ALIAS`: a version is tried first."""

    name: str
    token: str | None = None

    def __str__(self) -> str:
        return f"{self.name}@{self.token}" if self.token else self.name


def parse_dataset(text: str) -> DatasetRef:
    name, sep, token = text.strip().partition("@")
    segment("dataset name", name)
    if sep:
        version(token)
        return DatasetRef(name, token)
    return DatasetRef(name)


def exact_version(text: str, verb: str) -> tuple[str, str]:
    """`NAME@VERSION` for verbs that act on one immutable version (register, verify, rm)."""
    ref = parse_dataset(text)
    if ref.token is None:
        raise UsageError(f"{verb} requires NAME@VERSION (an exact version, not an alias)")
    return ref.name, ref.token


def is_dataset_reference(value: str) -> bool:
    return value.startswith(DATASET_SCHEME)


def parse_dataset_reference(value: str) -> DatasetRef:
    """`dataset:NAME[@TOKEN]` from a run config value."""
    return parse_dataset(value[len(DATASET_SCHEME) :])


@dataclass(frozen=True)
class ModelRef:
    """`MODEL@RUN` (an exact run), `MODEL:ALIAS`, or a bare `MODEL` (alias default)."""

    model: str
    run: str | None = None
    alias: str | None = None

    def __str__(self) -> str:
        return f"{self.model}@{self.run}" if self.run else f"{self.model}:{self.alias}"


def parse_model(text: str) -> ModelRef:
    text = text.strip()
    if "@" in text:
        model, _, run = text.partition("@")
        if not model or not run:
            raise UsageError(f"model reference {text!r} must be MODEL@RUN")
        return ModelRef(segment("model", model), run=segment("run", run))
    if ":" in text:
        model, _, alias = text.partition(":")
        if not model or not alias:
            raise UsageError(f"model reference {text!r} must be MODEL:ALIAS")
        return ModelRef(segment("model", model), alias=segment("alias", alias))
    return ModelRef(segment("model", text), alias=MODEL_DEFAULT_ALIAS)

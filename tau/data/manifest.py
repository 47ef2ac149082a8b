"""`register --manifest FILE`: a caller-supplied file list, recorded without reading bytes."""

from __future__ import annotations

from pathlib import Path

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from tau import safeyaml
from tau.data.records import Component, DatasetFile, DatasetSource
from tau.errors import UsageError, ValidationError


class DatasetManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: list[DatasetFile]
    source: DatasetSource | None = None
    components: list[Component] = Field(default_factory=list)


def load_manifest(path: Path) -> DatasetManifest:
    try:
        data = safeyaml.load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"--manifest {path}: {error.strerror or error}") from None
    except (UnicodeDecodeError, safeyaml.YamlRefused) as error:
        raise ValidationError(f"--manifest {path} is not valid JSON or YAML ({error})") from None
    try:
        return DatasetManifest.model_validate(data)
    except pydantic.ValidationError as error:
        problems = [
            f"{'.'.join(str(p) for p in item['loc']) or '(top)'}: {item['msg']}"
            for item in error.errors(include_url=False)
        ]
        raise ValidationError(
            f"--manifest {path} is not a dataset file list ({{files[], source, components}})",
            problems=problems,
            owner="researcher (dataset registry)",
        ) from None

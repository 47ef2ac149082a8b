"""Reading one registry record off a root, with a damaged file named instead of a traceback."""

from __future__ import annotations

import json
from typing import TypeVar

import pydantic

from tau.data.layout import in_pod
from tau.data.records import Record
from tau.data.root import Root
from tau.errors import RuntimeFailure

R = TypeVar("R", bound=Record)


class DamagedRecord(RuntimeFailure):
    """A registry file that is not the record it should be."""


def read(root: Root, path: str, model: type[R]) -> R | None:
    raw = root.read(path)
    if raw is None:
        return None
    try:
        return model.model_validate(json.loads(raw))
    except (ValueError, pydantic.ValidationError) as error:
        detail = str(error).splitlines()[0][:160]
        raise DamagedRecord(
            f"{in_pod(path)} on {root.label} is not a valid {model.__name__} ({detail})",
            hint="restore it from the record's other copy or remove it; registry records are "
            "written only by tau",
            owner="platform operator (workspace storage)",
        ) from None

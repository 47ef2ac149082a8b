"""Field metadata shared by the models, the JSON Schema and `explain-config`.

Each field is declared once in `models.py` with `spec(...)`; the schema generator and the
field reference read the same metadata, so documentation cannot drift from validation.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

SUPPORTED = "supported"
RESERVED = "reserved"
WORKFLOW_ONLY = "workflow-only"
DIRECT_ONLY = "direct-only"
STATUSES = (SUPPORTED, RESERVED, WORKFLOW_ONLY, DIRECT_ONLY)


def spec(
    default: Any = None,
    *,
    doc: str,
    status: str = SUPPORTED,
    values: tuple[str, ...] = (),
    aliases: dict[str, str] | None = None,
    shown_default: str | None = None,
    notes: str = "",
    json_type: str | list[str] | None = None,
    default_factory: Any = None,
) -> Any:
    """A model field with the reference metadata.

    `values` are the canonical enumeration, `aliases` deprecated spellings mapped to their
    canonical value, `shown_default` the documented default when the stored default is None
    because "unset" must stay distinguishable (for example derived or engine-dependent ones).
    """
    assert status in STATUSES, status
    extra: dict[str, Any] = {"x-tau-status": status}
    if notes:
        extra["x-tau-notes"] = notes
    if values:
        extra["x-tau-values"] = list(values)
    if aliases:
        extra["x-tau-aliases"] = dict(aliases)
    if shown_default is not None:
        extra["x-tau-default"] = shown_default
    if json_type is not None:
        extra["x-tau-json-type"] = json_type
    if default_factory is not None:
        return Field(default_factory=default_factory, description=doc, json_schema_extra=extra)
    return Field(default, description=doc, json_schema_extra=extra)

"""JSON data by one name: Kubernetes objects, run status documents, `-o json|yaml` output.

`JSONValue` is exact: JSON data printed or sent whole (read-only mappings and sequences, so
a `dict[str, str]` is one too). `JSONObject` is a JSON object read by key. Kubernetes
objects are deep and have no schema in this code (they are read with
`(obj.get("spec") or {}).get(...)` chains), so the members of a `JSONObject` are unchecked:
this alias is the one place that says so, instead of `Any` in every signature. Where data
enters (the Kubernetes client decoding an answer), it is checked to be an object, the one
thing callers rely on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = "JSONScalar | Sequence[JSONValue] | Mapping[str, JSONValue]"
JSONObject: TypeAlias = dict[str, Any]

"""Rendered objects as a dry run prints them: multi-document YAML, or a JSON list."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

OUTPUTS = ("yaml", "json")


def dump(objects: Sequence[Mapping[str, object]], output: str) -> str:
    if output == "json":
        return json.dumps(list(objects), indent=2) + "\n"
    import yaml

    return yaml.safe_dump_all(
        [dict(obj) for obj in objects], sort_keys=False, default_flow_style=False
    )

"""Strict YAML reading for checked-in contracts (descriptor, project catalog).

PyYAML silently keeps the last of two duplicate keys and happily expands anchors; for files
that decide where workloads run, both hide mistakes. These helpers refuse them, and report
the line of each problem.
"""

from __future__ import annotations

from typing import Any

import yaml

STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"


class StrictYamlError(ValueError):
    """A structural problem in the YAML text itself (before any schema applies)."""


def load_one(text: str, *, strings_only: bool = False, allow_anchors: bool = True) -> Any:
    """Decode exactly one YAML document, rejecting duplicate keys.

    `strings_only` additionally requires every key and scalar to be a string (so `path: 1`
    is an error instead of an int) and forbids anchors, aliases and merge keys.
    """
    try:
        if not allow_anchors or strings_only:
            for event in yaml.parse(text, Loader=yaml.SafeLoader):
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                    line = event.start_mark.line + 1
                    raise StrictYamlError(f"line {line}: YAML anchors and aliases are not allowed")
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise StrictYamlError(f"{where}{problem}") from None
    if len(nodes) > 1:
        raise StrictYamlError("multiple YAML documents are not allowed")
    if not nodes or nodes[0] is None:
        return None
    _check(nodes[0], strings_only)
    return yaml.safe_load(text)


def _check(node: yaml.Node, strings_only: bool) -> None:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            is_merge = key.tag == MERGE_TAG or getattr(key, "value", None) == "<<"
            if strings_only and is_merge:
                line = key.start_mark.line + 1
                raise StrictYamlError(f"line {line}: merge keys are not allowed")
            if isinstance(key, yaml.ScalarNode):
                if key.value in seen:
                    raise StrictYamlError(
                        f"line {key.start_mark.line + 1}: duplicate key {key.value!r}"
                    )
                seen.add(key.value)
            if strings_only and (not isinstance(key, yaml.ScalarNode) or key.tag != STR_TAG):
                raise StrictYamlError(f"line {key.start_mark.line + 1}: keys must be strings")
            _check(value, strings_only)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check(item, strings_only)
    elif strings_only and node.tag != STR_TAG:
        raise StrictYamlError(f"line {line}: {node.value!r} must be a string (quote it)")

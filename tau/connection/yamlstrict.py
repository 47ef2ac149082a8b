"""Strict YAML reading for checked-in contracts (descriptor, project catalog).

PyYAML silently keeps the last of two duplicate keys and happily expands anchors; for files
that decide where workloads run, both hide mistakes. These helpers refuse them, and report
the line of each problem.
"""

from __future__ import annotations

from typing import cast

import yaml

from tau import safeyaml

STR_TAG = "tag:yaml.org,2002:str"
MERGE_TAG = "tag:yaml.org,2002:merge"


class StrictYamlError(ValueError):
    """A structural problem in the YAML text itself (before any schema applies)."""


def load_one(text: str, *, strings_only: bool = False, allow_anchors: bool = True) -> object:
    """Decode exactly one YAML document, rejecting duplicate keys.

    `strings_only` additionally requires every key and scalar to be a string (so `path: 1`
    is an error instead of an int) and forbids anchors, aliases and merge keys.
    """
    return construct(compose_one(text, strings_only=strings_only, allow_anchors=allow_anchors))


def compose_one(
    text: str, *, strings_only: bool = False, allow_anchors: bool = True
) -> yaml.Node | None:
    """The checked node graph of `load_one`, for callers that also scan scalars by line."""
    try:
        if not allow_anchors or strings_only:
            for event in yaml.parse(text, Loader=safeyaml.Loader):
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                    # Parsed events always carry their marks (types-PyYAML types them optional).
                    line = cast(yaml.Mark, event.start_mark).line + 1
                    raise StrictYamlError(f"line {line}: YAML anchors and aliases are not allowed")
        node = safeyaml.compose(text)
    except yaml.YAMLError as error:
        raise StrictYamlError(str(safeyaml.refusal(error))) from None
    except safeyaml.YamlRefused as error:
        raise StrictYamlError(str(error)) from None
    if node is not None:
        _check(node, strings_only)
    return node


def construct(node: yaml.Node | None) -> object:
    try:
        return safeyaml.construct(node)
    except safeyaml.YamlRefused as error:
        raise StrictYamlError(str(error)) from None


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
                        f"line {key.start_mark.line + 1}: duplicate key {safeyaml.shown(key.value)}"
                    )
                seen.add(key.value)
            if strings_only and (not isinstance(key, yaml.ScalarNode) or key.tag != STR_TAG):
                raise StrictYamlError(f"line {key.start_mark.line + 1}: keys must be strings")
            _check(value, strings_only)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _check(item, strings_only)
    elif strings_only and node.tag != STR_TAG:
        raise StrictYamlError(
            f"line {line}: {safeyaml.shown(node.value)} must be a string (quote it)"
        )

"""YAML text -> plain data plus the line and column of every key and value.

We compose the node graph ourselves (through `tau.safeyaml`, which bounds aliases, nesting
and tags) so that every validation error can point at `file:line:column`, duplicate keys are
caught (YAML silently keeps the last one), and non-string keys become problems instead of
crashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import yaml

from tau import safeyaml

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


@dataclass
class Source:
    """A parsed YAML document: its data, where each path sits, and structural problems."""

    data: Any
    keys: dict[Path, Position] = field(default_factory=dict)
    values: dict[Path, Position] = field(default_factory=dict)
    problems: list[tuple[Path, str]] = field(default_factory=list)

    def position(self, path: Path) -> Position | None:
        """Where `path` is written: its key if it has one, else the nearest enclosing value."""
        path = tuple(path)
        while True:
            if path in self.keys:
                return self.keys[path]
            if path in self.values:
                return self.values[path]
            if not path:
                return None
            path = path[:-1]

    def value_position(self, path: Path) -> Position | None:
        path = tuple(path)
        return self.values.get(path) or self.position(path)


class YamlSyntaxError(Exception):
    """Raised for text that is not a single YAML document."""

    def __init__(self, message: str, position: Position | None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


def _position(mark: Any) -> Position | None:
    if mark is None:
        return None
    return Position(mark.line + 1, mark.column + 1)


def parse(text: str) -> Source:
    """Parse one YAML document; raise YamlSyntaxError for malformed or refused YAML."""
    try:
        node = safeyaml.compose(text)
        if node is None:
            return Source(data=None)
        return _Builder(safeyaml.Constructor()).build(node)
    except safeyaml.YamlRefused as error:
        position = Position(error.line, error.column or 1) if error.line else None
        raise YamlSyntaxError(error.problem, position) from None
    except yaml.YAMLError as error:
        refused = safeyaml.refusal(error)
        position = Position(refused.line, refused.column or 1) if refused.line else None
        raise YamlSyntaxError(refused.problem, position) from None


class _Unreadable(Exception):
    """A scalar that does not construct; its problem is already recorded."""


class _Builder:
    def __init__(self, loader: safeyaml.Constructor) -> None:
        self.loader = loader
        self.source = Source(data=None)

    def build(self, node: yaml.Node) -> Source:
        try:
            self.source.data = self.value(node, ())
        except _Unreadable:
            self.source.data = None
        return self.source

    def value(self, node: yaml.Node, path: Path) -> Any:
        # safeyaml.check bounded the expanded size and refused recursion and deep nesting.
        self.source.values.setdefault(path, _position(node.start_mark))  # type: ignore[arg-type]
        if isinstance(node, yaml.ScalarNode):
            try:
                return self.loader.construct_object(node, deep=True)
            except yaml.constructor.ConstructorError as error:
                # `engine: !!bool maybe`, `gpus: 1e99999999` as int: a problem at its field.
                self.source.problems.append((path, safeyaml.refusal(error).problem))
                raise _Unreadable from None
        if isinstance(node, yaml.SequenceNode):
            return [self.value(child, (*path, i)) for i, child in enumerate(node.value)]
        # A composed node that is neither scalar nor sequence is a mapping.
        return self.mapping(cast(yaml.MappingNode, node), path)

    def mapping(self, node: yaml.MappingNode, path: Path) -> dict[Any, Any]:
        # Keys written in this mapping; keys pulled in by `<<` merges may be overridden.
        own = {id(k) for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge"}
        self.loader.flatten_mapping(node)
        result: dict[Any, Any] = {}
        first_seen: dict[Any, Position | None] = {}
        own_seen: set[Any] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                self.source.problems.append((path, "mapping keys must be plain strings"))
                continue
            key = self.loader.construct_object(key_node, deep=True)
            key_position = _position(key_node.start_mark)
            if not isinstance(key, str):
                self.source.keys.setdefault((*path, str(key)), key_position)  # type: ignore[arg-type]
                self.source.problems.append(
                    ((*path, str(key)), f"key {key!r} must be a string; quote it")
                )
                continue
            child = (*path, key)
            is_own = id(key_node) in own
            if key in own_seen and is_own:
                first = first_seen[key]
                where = f" (first defined at line {first.line})" if first else ""
                self.source.keys[child] = key_position  # type: ignore[assignment]
                self.source.problems.append((child, f"duplicate key {key!r}{where}"))
                continue
            if is_own:
                own_seen.add(key)
            first_seen[key] = key_position
            self.source.keys[child] = key_position  # type: ignore[assignment]
            try:
                result[key] = self.value(value_node, child)
            except _Unreadable:
                continue  # reported once, at its field; validating it again adds only noise
        return result

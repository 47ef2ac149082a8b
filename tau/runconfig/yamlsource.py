"""YAML text -> plain data plus the line and column of every key and value.

We compose the node graph ourselves (instead of `yaml.safe_load`) so that every validation
error can point at `file:line:column`, duplicate keys are caught (YAML silently keeps the
last one), and non-string keys or recursive aliases become problems instead of crashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

try:
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

Path = tuple[str | int, ...]

# Alias expansion bound: a few-KiB "billion laughs" document must not take minutes.
MAX_NODES = 200_000


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
    """Parse one YAML document; raise YamlSyntaxError for malformed YAML."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Source(data=None)
        return _Builder(loader).build(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or "invalid YAML"
        if error.context and error.problem:
            problem = f"{error.context}, {error.problem}"
        raise YamlSyntaxError(problem, _position(mark)) from None
    except yaml.YAMLError as error:
        raise YamlSyntaxError(str(error).splitlines()[0], None) from None
    except (ValueError, OverflowError, RecursionError) as error:
        # SafeConstructor scalars can fail outside MarkedYAMLError (e.g. huge timestamps).
        raise YamlSyntaxError(f"invalid YAML scalar ({error})", None) from None
    finally:
        loader.dispose()


class _Builder:
    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.source = Source(data=None)
        self.visited = 0
        self.stack: set[int] = set()

    def build(self, node: yaml.Node) -> Source:
        self.source.data = self.value(node, ())
        return self.source

    def value(self, node: yaml.Node, path: Path) -> Any:
        self.visited += 1
        if self.visited > MAX_NODES:
            raise yaml.MarkedYAMLError(
                problem="document expands to too many nodes (alias bomb?)",
                problem_mark=node.start_mark,
            )
        self.source.values.setdefault(path, _position(node.start_mark))  # type: ignore[arg-type]
        if isinstance(node, yaml.ScalarNode):
            return self.loader.construct_object(node, deep=True)
        if id(node) in self.stack:
            self.source.problems.append((path, "recursive YAML alias is not allowed"))
            return None
        self.stack.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.value(child, (*path, i)) for i, child in enumerate(node.value)]
            return self.mapping(node, path)
        finally:
            self.stack.discard(id(node))

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
            result[key] = self.value(value_node, child)
        return result

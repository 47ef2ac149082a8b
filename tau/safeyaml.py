"""The one way TauGrid reads YAML: bounded, core-schema only, every refusal at a line.

`yaml.safe_load` is safe against code execution but not against hostile or broken text: a
500-byte alias bomb expands to a billion nodes in whatever walks the data next, `&a [*a]`
builds a list that contains itself, `!!bool maybe` raises a bare KeyError and a custom tag a
ConstructorError that callers rarely catch. Every file we read (run configs, descriptors,
catalogs, snapshots, values, kubeconfigs, tracked configs) goes through here instead:

* the composed node graph is checked before anything is constructed: at most
  `MAX_ALIASES` alias uses, at most `MAX_NODES` nodes added by expanding them, no recursive
  alias, nesting at most `MAX_DEPTH` deep;
* only the YAML core tags (and `!!timestamp`, which the resolver produces for dates) are
  accepted, explicit or implicit; `!custom`, `!!python/...`, `!!binary`, `!!set` are refused;
* a scalar that does not construct (`!!bool maybe`, `!!int x`, a year-0 date, a 5,000-digit
  integer) and an integer outside 64 bits are refused.

Each refusal is a `YamlRefused` carrying the 1-based line and column of the offending node;
callers prefix their file name. Shown input is truncated and escaped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from tau import credentials

try:
    Loader: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    Loader = yaml.SafeLoader

MAX_ALIASES = 100
MAX_NODES = 100_000
MAX_DEPTH = 100
_SHOWN = 40
_INT_RANGE = (-(2**63), 2**64 - 1)

_CORE = "tag:yaml.org,2002:"
ALLOWED_TAGS = frozenset(
    _CORE + name
    for name in ("str", "int", "float", "bool", "null", "seq", "map", "merge", "timestamp")
)
_VALUE_TAG = _CORE + "value"  # a bare `=`: PyYAML resolves it to a tag nothing constructs


class YamlRefused(ValueError):
    """YAML text we will not read; `str()` is `line L: problem` (or just the problem)."""

    def __init__(self, problem: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return f"line {self.line}: {self.problem}" if self.line else self.problem


def shown(text: str, limit: int = _SHOWN) -> str:
    """A quoted, escaped, truncated rendering of input text for a message."""
    text = credentials.redact(text[: limit + 256])  # before cutting a token in half
    cut = text if len(text) <= limit else text[:limit] + "..."
    return repr(cut).encode("ascii", "backslashreplace").decode()


def _refuse(problem: str, node_or_mark: Any) -> YamlRefused:
    mark = getattr(node_or_mark, "start_mark", node_or_mark)
    if mark is None:
        return YamlRefused(problem)
    return YamlRefused(problem, mark.line + 1, mark.column + 1)


class Constructor(yaml.constructor.SafeConstructor):
    """SafeConstructor whose scalar failures are placed errors instead of bare exceptions."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            value = super().construct_object(node, deep=deep)
        except yaml.YAMLError:
            raise
        except (ValueError, KeyError, TypeError, OverflowError, IndexError):
            tag = node.tag.removeprefix(_CORE)
            raw = node.value if isinstance(node, yaml.ScalarNode) else ""
            raise yaml.constructor.ConstructorError(
                None, None, f"{shown(raw)} is not a valid {tag}", node.start_mark
            ) from None
        out_of_range = isinstance(value, int) and not _INT_RANGE[0] <= value <= _INT_RANGE[1]
        if out_of_range and not isinstance(value, bool):
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"integer {shown(node.value)} does not fit in 64 bits; quote it if it is text",
                node.start_mark,
            )
        return value

    def construct_value_as_str(self, node: yaml.ScalarNode) -> str:
        return str(self.construct_scalar(node))


# types-PyYAML types constructors as taking a Loader, not the constructor mixin they belong to.
Constructor.add_constructor(_VALUE_TAG, Constructor.construct_value_as_str)  # type: ignore[type-var]


def refusal(error: yaml.YAMLError) -> YamlRefused:
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        if error.context and error.problem:
            problem = f"{error.context}, {error.problem}"
        return _refuse(" ".join(problem.split()), mark)
    return YamlRefused(" ".join(str(error).split())[:200] or "invalid YAML")


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check(root: yaml.Node) -> None:
    """Refuse a node graph that is too big when expanded, recursive, too deep or off-schema."""
    weight: dict[int, int] = {}
    active: set[int] = set()
    aliases = 0
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, finished = stack.pop()
        key = id(node)
        if finished:
            active.discard(key)
            weight[key] = 1 + sum(weight[id(child)] for child in _children(node))
            # Nodes aliases add beyond those written: a long alias-free file is not a bomb.
            if weight[key] - len(weight) > MAX_NODES:
                raise _refuse(
                    f"aliases expand the document to too many nodes (more than {MAX_NODES} "
                    "added; an alias bomb?)",
                    node,
                )
            continue
        if key in active:
            raise _refuse("recursive YAML alias (a node that contains itself)", node)
        if key in weight:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _refuse(f"more than {MAX_ALIASES} YAML aliases", node)
            continue
        if node.tag not in ALLOWED_TAGS and node.tag != _VALUE_TAG:
            tag = shown(node.tag.replace(_CORE, "!!"))
            raise _refuse(f"YAML tag {tag} is not allowed (core tags only)", node)
        if depth > MAX_DEPTH:
            raise _refuse(f"nesting deeper than {MAX_DEPTH} levels", node)
        if isinstance(node, yaml.ScalarNode):
            weight[key] = 1
            continue
        active.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in reversed(_children(node)))


def compose_all(text: str | bytes) -> list[yaml.Node]:
    """Every document's checked node graph (bytes are decoded as YAML decodes them)."""
    loader = Loader(text)
    try:
        nodes = []
        while loader.check_node():
            node = loader.get_node()
            check(node)
            nodes.append(node)
        return nodes
    except yaml.YAMLError as error:
        raise refusal(error) from None
    except RecursionError:
        raise YamlRefused(f"nesting deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()


def compose(text: str | bytes) -> yaml.Node | None:
    """The checked node graph of a single-document text (None when it holds no document)."""
    nodes = compose_all(text)
    if len(nodes) > 1:
        raise _refuse("multiple YAML documents are not allowed (a second starts here)", nodes[1])
    return nodes[0] if nodes else None


def construct(node: yaml.Node | None) -> Any:
    """Plain Python data from a checked node graph."""
    if node is None:
        return None
    try:
        return Constructor().construct_document(node)
    except yaml.YAMLError as error:
        raise refusal(error) from None
    except RecursionError:
        raise _refuse(f"nesting deeper than {MAX_DEPTH} levels", node) from None


def load(text: str | bytes) -> Any:
    """`yaml.safe_load` with the bounds above; one document (or none: None)."""
    return construct(compose(text))


def load_all(text: str) -> list[Any]:
    return [construct(node) for node in compose_all(text)]


def scalars(root: yaml.Node | None) -> Iterator[tuple[yaml.ScalarNode, bool]]:
    """Each distinct scalar once, with whether it is a mapping key (for content scanners)."""
    if root is None:
        return
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, is_key = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            yield node, is_key
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, False) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((value, False))
                stack.append((key, True))

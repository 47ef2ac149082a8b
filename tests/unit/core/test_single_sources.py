"""Each key, environment name, API type and SQL statement is spelled in exactly one place.

A label spelled twice drifts (Kueue never admits a workload whose queue label is misspelled in
one renderer), so these scans fail naming the file:line of a copy: `tau.azure.com/` and
`kueue.x-k8s.io/` keys, environment-variable names (read from the process, set on a child
process or a pod) and the platform defaults (config file names, queue, PVC, priority
classes, workspace, TTL) live in `tau/keys.py`, `Resource` definitions in
`tau/kube/resources.py`, and SQL in `tau/evidence`.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCANNED = ("tau", "infra")
KEY_DOMAINS = ("tau.azure.com/", "kueue.x-k8s.io/")
TAU_ENV = re.compile(r"TAU_[A-Z0-9_]*")
# The value of each platform default in tau/keys.py: a literal equal to one, anywhere else, is
# a second copy that drifts when the chart renames the object.
DEFAULTS: dict[str | int, str] = {
    "tau.yaml": "CONFIG_FILE_NAMES",
    "tau.yml": "CONFIG_FILE_NAMES",
    ".tau.yaml": "CONFIG_FILE_NAMES",
    "jobqueue": "DEFAULT_QUEUE",
    "blob-training": "DEFAULT_PVC",
    "taugrid-default": "DEFAULT_PRIORITY_CLASS or DEFAULT_WORKSPACE",
    "taugrid-priority": "PRIORITY_CLASS",
    28800: "DEFAULT_TTL_SECONDS",
}
SQL = re.compile(
    r"\bSELECT\b.*\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b|\bCREATE\s+(TABLE|(UNIQUE\s+)?INDEX|VIEW|TRIGGER)\b|\bALTER\s+TABLE\b"
    r"|\bDROP\s+(TABLE|INDEX)\b",
    re.DOTALL,
)


@functools.cache
def modules() -> tuple[tuple[str, ast.Module], ...]:
    return tuple(
        (rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel))
        for top in SCANNED
        for path in sorted((REPO / top).rglob("*.py"))
        for rel in [path.relative_to(REPO).as_posix()]
    )


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _dunder_all(tree: ast.Module) -> set[int]:
    """String constants of `__all__` name Python objects, not keys."""
    found: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            found.update(id(c) for c in ast.walk(node.value))
    return found


def strings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every string literal except docstrings; an f-string counts as its literal text."""
    skip = _docstrings(tree) | _dunder_all(tree)
    inside_fstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [v for v in node.values if isinstance(v, ast.Constant)]
            inside_fstrings.update(id(p) for p in parts)
            yield node.lineno, "".join(str(p.value) for p in parts)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skip | inside_fstrings
        ):
            yield node.lineno, node.value


def _is_environ(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def env_names(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Literal names read from or written to the process environment."""
    for node in ast.walk(tree):
        literal: ast.expr | None = None
        if isinstance(node, ast.Call):
            func = node.func
            reads = isinstance(func, ast.Attribute) and (
                (func.attr in ("get", "pop", "setdefault") and _is_environ(func.value))
                or func.attr in ("getenv", "putenv", "unsetenv")
            )
            if reads and node.args:
                literal = node.args[0]
            for keyword in node.keywords:
                if keyword.arg == "envvar":
                    yield from _literal(keyword.value)
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            literal = node.slice
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            literal = node.left
        if literal is not None:
            yield from _literal(literal)


def _literal(node: ast.expr) -> Iterator[tuple[int, str]]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.lineno, node.value
    elif isinstance(node, ast.JoinedStr):
        yield node.lineno, "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))


def test_tau_and_kueue_keys_and_environment_names_are_spelled_only_in_keys_py() -> None:
    copies = []
    for rel, tree in modules():
        if rel == "tau/keys.py":
            continue
        for line, text in strings(tree):
            if any(domain in text for domain in KEY_DOMAINS) or TAU_ENV.fullmatch(text):
                copies.append(f"{rel}:{line}: {text[:80]!r}")
        for line, name in env_names(tree):
            copies.append(f"{rel}:{line}: environment name {name!r}")
    assert not copies, "spell these with a tau/keys.py name:\n" + "\n".join(copies)


ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


@functools.cache
def keys_env_names() -> dict[str, str]:
    """Each environment name tau/keys.py defines (`ENV_*`) -> the constant that spells it."""
    from tau import keys

    return {
        value: name
        for name, value in vars(keys).items()
        if name.startswith("ENV_") and isinstance(value, str)
    }


def env_entry_names(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Literal names of Kubernetes container env entries (`{"name": "X", "value": ...}`)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        fields = {
            key.value: value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant)
        }
        name = fields.get("name")
        if (
            {"value", "valueFrom"} & fields.keys()
            and isinstance(name, ast.Constant)
            and isinstance(name.value, str)
            and ENV_NAME.fullmatch(name.value)
        ):
            yield name.lineno, name.value


def env_copies(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """A literal equal to an environment name keys.py defines, and a pod env entry's name."""
    defined = keys_env_names()
    for line, text in strings(tree):
        if text in defined:
            yield line, f"{text!r} (use keys.{defined[text]})"
    for line, name in env_entry_names(tree):
        if name not in defined:
            yield line, f"env entry {name!r} (define it in tau/keys.py)"


def test_environment_names_outside_the_tau_prefix_are_spelled_only_in_keys_py() -> None:
    """KUBECONFIG, HF_HOME, a sidecar's POD_NAME: a second spelling drifts like a label."""
    copies = [
        f"{rel}:{line}: {what}"
        for rel, tree in modules()
        if rel != "tau/keys.py"
        for line, what in env_copies(tree)
    ]
    assert not copies, "spell these with a tau/keys.py name:\n" + "\n".join(copies)


@pytest.mark.parametrize(
    "source",
    [
        'env = {"KUBECONFIG": path}',
        'POD_ONLY_ENV = ("NCCL_SOCKET_IFNAME", "HF_HOME")',
        'env = [{"name": "NEW_KNOB", "value": "1"}]',
        'env = [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]',
    ],
)
def test_the_environment_scan_catches_each_copy(source: str) -> None:
    assert list(env_copies(ast.parse(source)))


def test_the_environment_scan_passes_named_constants_and_other_entries() -> None:
    source = (
        'env = [{"name": keys.ENV_POD_NAME, "valueFrom": ref}]\n'
        'metrics = [{"name": "gpu_runtime", "value": 1}]\n'
    )
    assert not list(env_copies(ast.parse(source)))


def default_copies(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Literals (strings, or integers other than booleans) equal to a platform default."""
    for line, text in strings(tree):
        if text in DEFAULTS:
            yield line, text
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) else None
        if isinstance(value, int) and not isinstance(value, bool) and value in DEFAULTS:
            yield node.lineno, str(value)


def test_platform_defaults_are_spelled_only_in_keys_py() -> None:
    copies = [
        f"{rel}:{line}: {text!r} (use keys.{DEFAULTS[int(text) if text.isdigit() else text]})"
        for rel, tree in modules()
        if rel != "tau/keys.py"
        for line, text in default_copies(tree)
    ]
    assert not copies, "spell these with their tau/keys.py name:\n" + "\n".join(copies)


@pytest.mark.parametrize(
    "source",
    [
        'DEFAULT_PVC = "blob-training"',
        'def f(queue: str = "jobqueue") -> None: ...',
        'NAMES = ("tau.yaml", "tau.yml")',
        "ttl_seconds_after_finished: int = 28800",
        'x = {"default": "taugrid-default", "priority": "taugrid-priority"}',
    ],
)
def test_the_default_scan_catches_each_copy(source: str) -> None:
    assert list(default_copies(ast.parse(source)))


def test_every_api_type_is_defined_in_the_one_resource_table() -> None:
    copies = [
        f"{rel}:{node.lineno}"
        for rel, tree in modules()
        if rel != "tau/kube/resources.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name | ast.Attribute)
        and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) == "Resource"
    ]
    assert not copies, "define these in tau/kube/resources.py:\n" + "\n".join(copies)


def test_the_resource_table_imports_nothing_heavy() -> None:
    tree = dict(modules())["tau/kube/resources.py"]
    imported = {
        alias.name if isinstance(node, ast.Import) else f"{node.module}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported <= {"__future__", "dataclasses", "urllib.parse", "tau"}


def test_sql_statements_live_only_in_tau_evidence() -> None:
    found = [
        f"{rel}:{line}: {text[:80]!r}"
        for rel, tree in modules()
        if not rel.startswith("tau/evidence/")
        for line, text in strings(tree)
        if SQL.search(text)
    ]
    assert not found, "move these statements into a tau/evidence function:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        'x = {"tau.azure.com/gpu-class": "a"}',
        'x = f"check {y} kueue.x-k8s.io/queue-name"',
        'x = "TAU_NEW_KNOB"',
        'import os\nx = os.environ.get("HOME")',
        'import os\nx = "KUBECONFIG" in os.environ',
    ],
)
def test_the_key_scan_catches_each_spelling(source: str) -> None:
    tree = ast.parse(source)
    hits = [
        text
        for _, text in strings(tree)
        if any(d in text for d in KEY_DOMAINS) or TAU_ENV.fullmatch(text)
    ] + [name for _, name in env_names(tree)]
    assert hits


@pytest.mark.parametrize(
    "source",
    [
        'q = "SELECT * FROM runs WHERE run_id=?"',
        'q = f"DELETE FROM runs WHERE run_id IN ({marks})"',
        'q = "INSERT OR REPLACE INTO tags VALUES (?, ?)"',
    ],
)
def test_the_sql_scan_catches_each_statement(source: str) -> None:
    assert any(SQL.search(text) for _, text in strings(ast.parse(source)))

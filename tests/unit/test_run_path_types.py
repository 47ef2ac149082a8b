"""No `Any` in a function signature on the run path, so a type checker sees what flows there.

The run path is what `tau run` and its lifecycle verbs execute, from flags to the API server:
the files, and packages with every module inside, in `RUN_PATH`. JSON data (Kubernetes
objects, status documents) is typed by `tau.jsontypes`; a parameter or return annotated with
`Any` there, or with anything built from it (`dict[str, Any]`, `Callable[..., Any]`), fails
naming its file:line.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Files, or packages meaning every module inside them.
RUN_PATH = (
    "tau/cli/run.py",
    "tau/cli/run_lifecycle.py",
    "tau/cli/run_record.py",
    "tau/cli/dryrun.py",
    "tau/cli/logs.py",
    "tau/cli/options.py",
    "tau/cli/output.py",
    "tau/cli/documents.py",
    "tau/kube",
    "tau/connection",
    "tau/lifecycle",
    "tau/engine",
    "tau/run",
    "tau/render",
    "tau/resolve",
    "tau/profiles",
)


def run_path() -> list[Path]:
    files = []
    for entry in RUN_PATH:
        path = REPO / entry
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def _names_any(annotation: ast.expr) -> bool:
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name) and node.id == "Any":
            return True
        if isinstance(node, ast.Attribute) and node.attr == "Any":
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                inner = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                continue
            if _names_any(inner):
                return True
    return False


def any_in_signatures(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, function) for each parameter or return annotation that names `Any`."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        args = node.args
        parameters = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        parameters += [a for a in (args.vararg, args.kwarg) if a is not None]
        for parameter in parameters:
            if parameter.annotation is not None and _names_any(parameter.annotation):
                yield parameter.annotation.lineno, f"{node.name}({parameter.arg})"
        if node.returns is not None and _names_any(node.returns):
            yield node.returns.lineno, f"{node.name} -> return"


def test_the_run_path_modules_exist() -> None:
    missing = [str(path.relative_to(REPO)) for path in run_path() if not path.is_file()]
    assert not missing, "RUN_PATH names files that moved:\n" + "\n".join(missing)


def test_no_function_on_the_run_path_takes_or_returns_any() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {where}"
        for path in run_path()
        if path.is_file()
        for line, where in any_in_signatures(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "type these with tau.jsontypes or a real type, not Any:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "def f(obj: dict[str, Any]) -> None: ...",
        "def f() -> list[typing.Any]: ...",
        "def f(*args: Any) -> None: ...",
        "def f(*, say: Callable[[str], Any]) -> None: ...",
        "def f(x: 'Any | None') -> None: ...",
        "class C:\n    def m(self, **kw: Any) -> None: ...",
    ],
)
def test_the_scan_catches_each_spelling(source: str) -> None:
    assert list(any_in_signatures(ast.parse(source)))


def test_the_scan_passes_typed_signatures() -> None:
    source = "def f(obj: JSONObject, n: int = 0) -> list[JSONObject]:\n    x: Any = 1\n"
    assert not list(any_in_signatures(ast.parse(source)))

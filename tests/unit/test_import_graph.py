"""The import graph of `tau`: no cycles, and packages stacked in one documented order.

Every import statement in tau/**/*.py counts — at module level, inside functions and under
`TYPE_CHECKING` — because an import moved into a function is still a dependency: it only
postpones the failure from import time to the first call. An import is an edge to the module
whose code it names: `from tau.x import y` points at `tau.x.y` when that is a submodule, else
at `tau.x`. The parent packages Python initialises on the way are not edges (a package whose
`__init__` re-exports its submodules would otherwise be a cycle with each of them).

`LAYERS` is the package order docs/architecture.md draws, bottom first. A module belongs to
the longest entry that prefixes it, so `tau.portal.cli` (the taugrid-portal command, built on
tau's CLI) sits above `tau.cli` while the rest of `tau.portal` sits below it. A module may
import modules of its own entry and of entries in lower layers, never of its own layer's
other entries or of a higher layer. A failure names the import to change: file:line,
importer → imported.

A package listed in `FACES` is imported through its `__init__` only, by tau/ and by the
repository's other Python alike (its own tests excepted, which may reach its internals).
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "tau.keys",
        "tau.credentials",
        "tau.atomicfile",
        "tau.version",
        "tau.jsontypes",
        "tau.lazyexports",
    ),
    ("tau.errors",),
    ("tau.safeyaml",),
    ("tau.api", "tau.runconfig", "tau.kube", "tau.evidence"),
    ("tau.connection",),
    ("tau.profiles",),
    ("tau.render",),
    ("tau.data",),
    ("tau.resolve",),
    ("tau.run.failures", "tau.run.status", "tau.run.results"),
    ("tau.lifecycle", "tau.engine"),
    ("tau.run",),
    (
        "tau.workspace",
        "tau.cluster",
        "tau.serving",
        "tau.controller",
        "tau.portal",
        "tau.sdk",
        "tau.stellar",
    ),
    ("tau.cli",),
    ("tau.portal.cli", "tau"),
    ("tau.portal.__main__", "tau.__main__"),
)

# Packages whose `__init__` is the one public face: other code imports the package, never
# one of its modules, so the modules can be split and renamed without touching callers.
FACES = ("tau.connection",)


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: Path
    line: int
    names: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}: {self.importer} → {self.imported}"


def _modules(root: Path) -> dict[str, Path]:
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules(REPO / "tau")


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _bound_names(package: str) -> frozenset[str]:
    """Names a package's `__init__` binds itself (defs, classes, assignments, imports)."""
    tree = _tree(MODULES[package])
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return frozenset(names)


BOUND = {
    module: _bound_names(module) for module, path in MODULES.items() if path.name == "__init__.py"
}


def _known(name: str) -> str | None:
    """The module `name` loads: itself, or the longest tau module prefixing it."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_tau(name: str) -> bool:
    return name == "tau" or name.startswith("tau.")


def imports_in(path: Path, importer: str) -> Iterator[Import]:
    """Every import of tau code in one file, wherever the statement stands."""
    package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name) if _is_tau(alias.name) else None
                if target:
                    yield Import(importer, target, path, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if not _is_tau(source):
                continue
            for alias in node.names:
                # Python looks the name up on the package first: `from tau.connection import
                # connect` is the function its __init__ binds, not the module of that name.
                submodule = f"{source}.{alias.name}"
                own = alias.name in BOUND.get(source, ())
                target = submodule if submodule in MODULES and not own else _known(source)
                if target:
                    yield Import(importer, target, path, node.lineno, (alias.name,))


@functools.cache
def all_imports() -> list[Import]:
    """One edge per (statement, imported module): `from x import a, b` of one module is one."""
    edges = {
        (edge.path, edge.line, edge.imported): edge
        for module, path in MODULES.items()
        for edge in imports_in(path, module)
        if edge.imported != module
    }
    return list(edges.values())


def _cycles(edges: list[Import]) -> list[list[Import]]:
    """The strongly connected components with more than one module, as their inner edges."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.importer, set()).add(edge.imported)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(graph.get(node, ())):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [
        sorted((e for e in edges if e.importer in c and e.imported in c), key=lambda e: str(e))
        for c in components
    ]


def unit_of(module: str) -> str | None:
    """The LAYERS entry a module belongs to (the root entry `tau` holds only tau/__init__)."""
    units = [u for layer in LAYERS for u in layer]
    matches = [u for u in units if module == u or (u != "tau" and module.startswith(u + "."))]
    return max(matches, key=len) if matches else None


def layer_of(unit: str) -> int:
    return next(number for number, layer in enumerate(LAYERS) if unit in layer)


def test_no_tau_module_imports_itself_back_through_others() -> None:
    cycles = _cycles(all_imports())
    shown = "\n\n".join("\n".join(f"  {edge}" for edge in cycle) for cycle in cycles)
    if cycles:
        pytest.fail(f"import cycles (break one edge of each):\n{shown}", pytrace=False)


def test_every_tau_module_has_a_place_in_the_layer_order() -> None:
    unplaced = sorted(module for module in MODULES if unit_of(module) is None)
    assert not unplaced, (
        f"modules outside every LAYERS entry: {', '.join(unplaced)}; add their package to "
        "LAYERS in tests/unit/test_import_graph.py and to docs/architecture.md"
    )


def test_packages_import_only_from_the_layers_below_them() -> None:
    violations = []
    for edge in all_imports():
        importer, imported = unit_of(edge.importer), unit_of(edge.imported)
        if importer is None or imported is None or importer == imported:
            continue
        if layer_of(imported) >= layer_of(importer):
            relation = "the same layer" if layer_of(imported) == layer_of(importer) else "above"
            violations.append(f"  {edge}  ({imported} is {relation} {importer})")
    if violations:
        pytest.fail(
            "imports against the package order (LAYERS in tests/unit/test_import_graph.py, "
            "docs/architecture.md):\n" + "\n".join(sorted(violations)),
            pytrace=False,
        )


def documented_layers() -> list[set[str]]:
    """The package column of docs/architecture.md's layer table, as module names."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    layers = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        names = re.findall(r"`([^`]+)`", cells[1])
        layers.append(
            {name if name == "tau" else f"tau.{name}" for name in names if "/" not in name}
        )
    return layers


def test_the_architecture_page_draws_the_same_layers() -> None:
    """The page a newcomer reads is the order this test enforces, layer by layer."""
    assert documented_layers() == [set(layer) for layer in LAYERS]


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _importers_outside(face: str) -> Iterator[tuple[Path, Import]]:
    """Imports of `face` from tau/ and from the repository's other Python (hack, bench,
    infra, tests), except the package itself and its own tests."""
    own_tests = REPO / "tests" / "unit" / face.removeprefix("tau.").replace(".", "/")
    last = face.rpartition(".")[2]  # a file that never names it cannot import it
    for directory in ("tau", "hack", "bench", "infra", "tests"):
        for path in sorted((REPO / directory).rglob("*.py")):
            if own_tests in path.parents or last not in path.read_text(encoding="utf-8"):
                continue
            importer = ".".join(path.relative_to(REPO).with_suffix("").parts)
            for edge in imports_in(path, importer):
                if _within(edge.imported, face) and not _within(edge.importer, face):
                    yield path, edge


def test_other_code_imports_a_face_package_only_through_its_face() -> None:
    for face in FACES:
        exported = set(_exported(face))
        wrong = []
        for _, edge in _importers_outside(face):
            if edge.imported != face:
                wrong.append(f"  {edge}  (import it from {face})")
            wrong.extend(
                f"  {edge}  ({name} is not in {face}.__all__)"
                for name in edge.names
                if name not in exported
            )
        if wrong:
            pytest.fail(
                f"imports past the public face of {face}:\n" + "\n".join(wrong), pytrace=False
            )


def _exported(package: str) -> list[str]:
    for node in _tree(MODULES[package]).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"{package} declares no __all__")


def test_the_connection_face_loads_without_the_kubernetes_client() -> None:
    """Offline commands (`tau run validate`, `tau workspace connection --offline`) import it."""
    probe = (
        "import sys, tau.connection; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('kubernetes', 'azure')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("face", ["tau.connection", "tau.evidence"])
def test_a_lazily_loaded_face_gives_each_exported_name_its_object(face: str) -> None:
    """These faces load a name's module on first access (PEP 562). Python binds a submodule
    on its package when it is first imported, so a function named like its own module would
    turn into that module once anything imported the module directly: import every
    submodule first, then every exported name must still be what its module defines."""
    probe = (
        "import importlib, pkgutil, types, sys\n"
        f"face = importlib.import_module({face!r})\n"
        "for info in pkgutil.iter_modules(face.__path__):\n"
        "    importlib.import_module(f'{face.__name__}.{info.name}')\n"
        "wrong = [n for n in face.__all__ if isinstance(getattr(face, n), types.ModuleType)]\n"
        "print(wrong)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out.strip() == "[]"

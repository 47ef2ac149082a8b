"""`tau.lifecycle` prints nothing itself: it returns data or calls the `say`, `note` and `wait`
callbacks the CLI hands in, so every line a user sees is laid out in `tau.cli` and the
lifecycle runs unchanged under the controller, the SDK or a test.

Every statement of tau/lifecycle/**/*.py counts, inside functions and under `TYPE_CHECKING`
alike. A failure names file:line and what to hand to a callback instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
LIFECYCLE = REPO / "tau" / "lifecycle"

# Terminal libraries: their output and styling belong to the CLI.
TERMINAL_PACKAGES = ("click", "rich", "typer")
STREAMS = ("stdout", "stderr", "__stdout__", "__stderr__")


def _sys_aliases(tree: ast.Module) -> set[str]:
    """The names `sys` is bound to in this module (`import sys`, `import sys as s`)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.asname or a.name for a in node.names if a.name == "sys")
    return names


def _terminal_output(source: str, where: str) -> list[str]:
    """`where:line: what` for each terminal write or terminal library in `source`, in line
    order."""
    found = sorted(_uses(source), key=lambda use: use[0])
    return [f"{where}:{line}: {what}" for line, what in found]


def _uses(source: str) -> Iterator[tuple[int, str]]:
    tree = ast.parse(source)
    sys_names = _sys_aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in TERMINAL_PACKAGES:
                    yield node.lineno, f"imports {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in TERMINAL_PACKAGES:
                yield node.lineno, f"imports from {node.module}"
            if node.module == "sys":
                for alias in node.names:
                    if alias.name in STREAMS:
                        yield node.lineno, f"imports sys.{alias.name}"
        elif isinstance(node, ast.Call) and _named(node.func, {"print"}):
            yield node.lineno, "calls print()"
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in STREAMS
            and _named(node.value, sys_names)
        ):
            yield node.lineno, f"uses sys.{node.attr}"


def _named(node: ast.expr, names: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def test_lifecycle_imports_no_terminal_library_and_writes_to_no_std_stream() -> None:
    paths = sorted(LIFECYCLE.rglob("*.py"))
    assert paths, f"no modules under {LIFECYCLE.relative_to(REPO)}"
    found = [
        line
        for path in paths
        for line in _terminal_output(path.read_text(), str(path.relative_to(REPO)))
    ]
    assert not found, (
        "tau.lifecycle must leave terminal output to tau.cli: return the data, or call the "
        "say/note/wait callback the CLI passes in, instead of:\n  " + "\n  ".join(found)
    )


def test_the_scan_reports_each_kind_of_terminal_output_and_not_a_callback() -> None:
    source = (
        "import sys as s\n"
        "import rich.console\n"
        "from click import echo\n"
        "from sys import stderr\n"
        "def f(say):\n"
        "    print('x')\n"
        "    s.stdout.write('x')\n"
        "    say('fine')\n"
    )
    assert _terminal_output(source, "probe.py") == [
        "probe.py:2: imports rich.console",
        "probe.py:3: imports from click",
        "probe.py:4: imports sys.stderr",
        "probe.py:6: calls print()",
        "probe.py:7: uses sys.stdout",
    ]

"""Local-import check: a shipped entrypoint must not import project files that stay behind.

Only the entrypoint itself (and `workflow.extra_scripts`) travels with a direct run, so an
`import utils` that works on the laptop fails in the pod. Catching it offline saves a queue
wait and a failed run.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tau.runconfig.models import RunConfig


def unshipped_local_imports(config: RunConfig, config_dir: Path) -> list[str]:
    """Local modules the entrypoint imports that would not be shipped, sorted."""
    entrypoint = config.entrypoint_value
    run = config.run
    if not entrypoint or not entrypoint.lower().endswith(".py"):
        return []
    if run is not None and (run.source is not None or run.working_dir):
        return []  # the whole tree ships
    try:
        path = (config_dir / entrypoint).resolve()
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError, RuntimeError):
        # Missing, unparsable or symlink-looping files are the interpreter's business.
        return []
    roots = {path.parent, _project_root(config_dir)}
    shipped = {path.stem} | _extra_script_modules(config)
    missing: set[str] = set()
    for module in _imported_modules(tree):
        if module in shipped:
            continue
        if any(_is_module(root, module) for root in roots):
            missing.add(module)
    return sorted(missing)


def _is_module(root: Path, name: str) -> bool:
    package = root / name
    return (root / f"{name}.py").is_file() or (package.is_dir() and any(package.glob("*.py")))


def _project_root(config_dir: Path) -> Path:
    """`tau/train.yaml` lives one level below the project; `tau.yaml` at its root."""
    return config_dir.parent if config_dir.name == "tau" else config_dir


def _extra_script_modules(config: RunConfig) -> set[str]:
    scripts = (config.workflow.extra_scripts if config.workflow else None) or []
    modules = set()
    for spec in scripts:
        source, _, dest = spec.partition(":")
        name = Path(dest or source).name
        modules.add(name.removesuffix(".py"))
    return modules


def _imported_modules(tree: ast.AST) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # `from . import x` / `from .x import y`
                names = [node.module] if node.module else [a.name for a in node.names]
                modules.update(n.split(".")[0] for n in names)
            elif node.module:
                modules.add(node.module.split(".")[0])
    return modules

"""`tau python build`: a module's decorated workflows become a submittable build directory.

One directory per workflow holds its manifest (`<name>.yaml`) and everything the manifest
ships: the generated trainer (`train.py`), the user's module (`tau_user_module.py`), the
two SDK support files and any extra scripts. `build.json` (`kind: tau.python.build`) lists
them in submission order, trains before the evals that run after them. The build is
byte-stable: no timestamps, no absolute paths, so an unchanged module builds identically.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from tau.errors import UsageError
from tau.sdk import handles as h
from tau.sdk.serve import ServeHandle
from tau.version import __version__

BUILD_FILE = "build.json"
KIND = "tau.python.build"
FINETUNES = "/data/checkpoints/finetunes"


@dataclass(frozen=True)
class Overrides:
    namespace: str | None = None
    data_pvc: str | None = None
    queue: str | None = None
    gpu_class: str | None = None
    upstream_checkpoint: str | None = None


@dataclass
class Discovered:
    module: ModuleType
    path: Path
    workflows: list[tuple[str, h.Handle]] = field(default_factory=list)
    serves: list[tuple[str, ServeHandle]] = field(default_factory=list)


def load_module(path: Path) -> Discovered:
    """Import a workflow module by path (its decorators run) and collect its handles."""
    path = Path(path)
    if not path.is_file() or path.suffix != ".py":
        raise UsageError(f"{path}: not a Python file; pass the module that defines the workflows")
    name = f"tau_sdk_user_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except UsageError:
        raise
    except ImportError as error:
        raise UsageError(
            f"{path}: importing it failed ({error})",
            hint="install the module's imports in this interpreter, or set TAU_PYTHON to one "
            "that has them",
        ) from None
    finally:
        sys.path.remove(str(path.parent.resolve()))
    found = Discovered(module, path)
    for attribute, value in vars(module).items():
        if isinstance(value, h.Handle):
            found.workflows.append((attribute, value))
        elif isinstance(value, ServeHandle):
            found.serves.append((attribute, value))
    names = [handle.name for _, handle in found.workflows]
    duplicate = sorted({n for n in names if names.count(n) > 1})
    if duplicate:
        raise UsageError(f"{path}: two workflows are named {', '.join(duplicate)}")
    return found


def ordered(found: Discovered) -> list[tuple[str, h.Handle]]:
    """Trains first, then evals; an eval's `after` must be a train of this module."""
    trains = {handle.name for _, handle in found.workflows if handle.kind == "train"}
    for _, handle in found.workflows:
        after = handle.options.after
        if handle.kind == "eval" and after and after not in trains:
            raise UsageError(
                f"@tau.eval({handle.name!r}) runs after {after!r}, which is not a @tau.train in "
                f"{found.path}"
            )
    return sorted(found.workflows, key=lambda item: (item[1].kind != "train", item[1].name))


def lineage_checkpoint(train: str, artifact: str) -> str:
    return f"{FINETUNES}/{train}/artifacts/{artifact}"


def manifest_for(
    handle: h.Handle, overrides: Overrides, checkpoints: dict[str, str]
) -> dict[str, Any]:
    data = handle.manifest()
    policy = data.setdefault("policy", {})
    for key in ("namespace", "queue", "gpu_class"):
        value = getattr(overrides, key)
        if value:
            policy[key] = value
    if not policy:
        data.pop("policy")
    if overrides.data_pvc:
        data.setdefault("storage", {})["data_pvc"] = overrides.data_pvc
    if handle.kind == "eval":
        upstream = overrides.upstream_checkpoint or (
            checkpoints.get(handle.options.after or "") if handle.options.after else None
        )
        if upstream:
            data["workflow"]["upstream_checkpoint"] = upstream
    data["workflow"]["extra_scripts"] = [
        _destination(entry) for entry in data["workflow"]["extra_scripts"]
    ]
    return data


def _prefix(manifest: dict[str, Any]) -> str:
    return (manifest.get("resource_naming") or {}).get("prefix") or "tau"


def _destination(entry: str) -> str:
    return entry.rpartition(":")[2] if ":" in entry else Path(entry).name


def build(source: Path, out: Path, overrides: Overrides = Overrides()) -> dict[str, Any]:
    found = load_module(source)
    workflows = ordered(found)
    if not workflows:
        raise UsageError(f"{source}: no @tau.train or @tau.eval workflows found")
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not (out / BUILD_FILE).is_file():
        raise UsageError(f"{out} is not empty and not a previous build; choose another --out")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    checkpoints = {
        handle.name: lineage_checkpoint(handle.name, handle.options.checkpoint_artifact)
        for _, handle in workflows
        if handle.kind == "train"
    }
    support = Path(__file__).resolve().parent
    entries = []
    for attribute, handle in workflows:
        directory = out / handle.name
        directory.mkdir()
        manifest = manifest_for(handle, overrides, checkpoints)
        _write(directory / h.WRAPPER, wrapper_source(attribute))
        shutil.copyfile(source, directory / h.USER_MODULE)
        shutil.copyfile(support.parent / "keys.py", directory / "tau_keys.py")
        shutil.copyfile(support / "ctx.py", directory / "tau_ctx.py")
        for entry in handle.options.extra_scripts:
            src = entry.rpartition(":")[0] if ":" in entry else entry
            origin = (Path(source).parent / src).resolve()
            if not origin.is_file():
                raise UsageError(
                    f"@tau.{handle.kind}({handle.name!r}) extra_scripts: {origin} is not a file"
                )
            shutil.copyfile(origin, directory / _destination(entry))
        _write(directory / f"{handle.name}.yaml", yaml.safe_dump(manifest, sort_keys=False))
        entries.append(
            {
                "kind": handle.kind,
                "name": handle.name,
                "attribute": attribute,
                "config": f"{handle.name}/{handle.name}.yaml",
                "namespace": manifest.get("policy", {}).get("namespace"),
                "after": handle.options.after,
                "upstream_checkpoint": manifest["workflow"].get("upstream_checkpoint"),
                "resource_name": f"{_prefix(manifest)}-{handle.name}",
                "secret_sources": [],
                "generated_secret": None,
            }
        )
    artifact = {
        "kind": KIND,
        "schema_version": 1,
        "generator": {"name": "tau-py", "version": __version__},
        "source": Path(source).name,
        "workloads": entries,
        "separate_serve": [
            {
                "attribute": attribute,
                "name": serve.name,
                "reason": "serving is deployed explicitly with tau serve deploy; it is not a "
                "managed workflow",
            }
            for attribute, serve in sorted(found.serves, key=lambda item: item[0])
        ],
    }
    _write(out / BUILD_FILE, json.dumps(artifact, indent=2, sort_keys=True) + "\n")
    return artifact


def wrapper_source(attribute: str) -> str:
    source = (Path(__file__).resolve().parent / "podwrapper.py").read_text()
    line = 'HANDLE = ""\n'
    assert line in source
    return source.replace(line, f"HANDLE = {attribute!r}\n", 1)


def read_build(directory: Path) -> dict[str, Any]:
    path = Path(directory) / BUILD_FILE
    try:
        artifact: dict[str, Any] = json.loads(path.read_text())
    except (OSError, ValueError):
        raise UsageError(f"{path}: not a tau python build (run `tau python build` first)") from None
    if artifact.get("kind") != KIND or artifact.get("schema_version") != 1:
        raise UsageError(f"{path}: not a {KIND} (schema_version 1)")
    return artifact


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")

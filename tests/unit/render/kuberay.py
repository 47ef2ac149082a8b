"""KubeRay's RayJob and RayService CRD schemas, from the module the local control plane runs.

The CRD YAML is read from the Go module cache (the version pinned by the local cluster's
kuberay module, downloaded through the Go proxy on first use), never vendored. A
structural CRD silently prunes unknown fields, so besides JSON-schema validation we also
report every field the API server would drop.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[3]
MODULE_DIR = REPO / "hack/localcluster/modules/kuberay"
MODULE = "github.com/ray-project/kuberay/ray-operator"
CRD = "config/crd/bases/ray.io_rayjobs.yaml"
RAYSERVICE_CRD = "config/crd/bases/ray.io_rayservices.yaml"


def _go(*args: str) -> str:
    result = subprocess.run(
        ["go", *args],
        cwd=MODULE_DIR,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"},
        timeout=600,
    )
    if result.returncode != 0:
        raise RuntimeError(f"go {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout.strip()


def module_dir() -> Path:
    """The pinned kuberay module in the module cache, downloaded on first use."""
    if shutil.which("go") is None:
        raise RuntimeError("the KubeRay CRD comes from the Go module cache: install Go >= 1.25")
    version = next(
        line.split()[1]
        for line in (MODULE_DIR / "go.mod").read_text().splitlines()
        if line.strip().startswith(MODULE + " ")
    )
    directory = Path(_go("env", "GOMODCACHE")) / f"{MODULE}@{version}"
    if not (directory / CRD).is_file():
        _go("mod", "download", f"{MODULE}@{version}")
    return directory


@functools.cache
def crd_schema(path: str) -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    crd = yaml.load((module_dir() / path).read_text(), Loader=loader)
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return version["schema"]["openAPIV3Schema"]


@functools.cache
def crd_validator(path: str) -> Any:
    """OpenAPI v3 CRD schemas are JSON-schema draft 4/7 compatible for validation purposes."""
    import jsonschema

    return jsonschema.Draft7Validator(crd_schema(path))


def rayjob_schema() -> dict[str, Any]:
    return crd_schema(CRD)


def rayjob_validator() -> Any:
    return crd_validator(CRD)


def rayservice_schema() -> dict[str, Any]:
    return crd_schema(RAYSERVICE_CRD)


def rayservice_validator() -> Any:
    return crd_validator(RAYSERVICE_CRD)


def pruned_fields(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Paths the API server would silently drop (not declared by the structural schema)."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    found: list[str] = []
    if isinstance(value, dict):
        properties = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if properties is not None and key in properties:
                found += pruned_fields(item, properties[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                found += pruned_fields(item, extra, f"{path}.{key}")
            elif properties is not None or extra is False:
                found.append(f"{path}.{key}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found += pruned_fields(item, schema["items"], f"{path}[{index}]")
    return found

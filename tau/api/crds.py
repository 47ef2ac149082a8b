"""Generate the CustomResourceDefinitions from the pydantic models (the only CRD source).

    python -m tau.api.crds            # write charts/taugrid/charts/tau-core-controller/crds/
    python -m tau.api.crds --check    # exit 1 if the checked-in files differ from the models

pydantic's JSON Schema is turned into a Kubernetes structural schema: references inlined,
`Optional` unions collapsed, titles dropped, and the x-kubernetes-* extensions kept.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from tau.api.cluster import TauCluster, TauClusterSpec, TauClusterStatus
from tau.api.meta import GROUP, VERSION, KubeObject
from tau.api.quota import TauQuotaRequest, TauQuotaRequestSpec, TauQuotaRequestStatus
from tau.api.workspace import TauWorkspace, TauWorkspaceSpec, TauWorkspaceStatus

KINDS: tuple[tuple[type[KubeObject], type[BaseModel], type[BaseModel]], ...] = (
    (TauCluster, TauClusterSpec, TauClusterStatus),
    (TauWorkspace, TauWorkspaceSpec, TauWorkspaceStatus),
    (TauQuotaRequest, TauQuotaRequestSpec, TauQuotaRequestStatus),
)
CRD_DIR = Path("charts/taugrid/charts/tau-core-controller/crds")


def structural(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI v3 schema of a model in the shape the API server accepts."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    defs = raw.pop("$defs", {})
    return _convert(raw, defs)


def _convert(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    node = dict(node)
    if "$ref" in node:
        target = defs[node.pop("$ref").rsplit("/", 1)[-1]]
        node = {**target, **node}
    if "anyOf" in node:
        options = [opt for opt in node.pop("anyOf") if opt.get("type") != "null"]
        if len(options) != 1:
            raise ValueError(f"unsupported union in CRD schema: {options}")
        node = {**_convert(options[0], defs), **node}
        if node.get("default", 0) is None:
            node.pop("default")
    if "const" in node:
        node["enum"] = [node.pop("const")]
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "x-items") or (key == "default" and value is None):
            continue
        if key == "additionalProperties" and value is False:
            continue
        if key == "properties":
            out[key] = {name: _convert(sub, defs) for name, sub in value.items()}
        elif key == "items":
            out[key] = {**_convert(value, defs), **node.get("x-items", {})}
        elif key == "additionalProperties" and isinstance(value, dict):
            out[key] = _convert(value, defs)
        else:
            out[key] = copy.deepcopy(value)
    if out.get("enum") and "type" not in out:
        out["type"] = "string"
    if "properties" in out:
        out["type"] = "object"
    if out.get("required") == []:
        out.pop("required")
    return out


def crd(kind: type[KubeObject], spec: type[BaseModel], status: type[BaseModel]) -> dict[str, Any]:
    info = kind.crd
    spec_schema = structural(spec)
    module_doc = sys.modules[kind.__module__].__doc__ or info.kind
    schema: dict[str, Any] = {
        "type": "object",
        "description": " ".join(module_doc.strip().split("\n\n")[0].split()),
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec_schema,
            "status": structural(status),
        },
    }
    if "required" in spec_schema or "x-kubernetes-validations" in spec_schema:
        schema["required"] = ["spec"]
    else:
        spec_schema["default"] = {}
    columns = [
        {"name": col.name, "type": col.type, "jsonPath": col.json_path} for col in info.columns
    ]
    columns.append({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"})
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": info.name},
        "spec": {
            "group": GROUP,
            "names": {
                "kind": info.kind,
                "listKind": f"{info.kind}List",
                "plural": info.plural,
                "singular": info.singular,
                "shortNames": list(info.short_names),
                "categories": ["tau"],
            },
            "scope": info.scope,
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": columns,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


class _Dumper(yaml.SafeDumper):
    """Plain YAML without anchors, so every schema reads on its own."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def render_all() -> dict[str, str]:
    """File name → YAML text for every CRD, deterministic byte for byte."""
    header = "# Generated by `python -m tau.api.crds` from tau/api; do not edit.\n"
    files = {}
    for kind, spec, status in KINDS:
        document = crd(kind, spec, status)
        text = yaml.dump(document, Dumper=_Dumper, sort_keys=True, width=100)
        files[f"{GROUP}_{kind.crd.plural}.yaml"] = header + text
    return files


def differences(directory: Path) -> list[str]:
    """Files under `directory` that are missing, stale or not generated from the models."""
    expected = render_all()
    problems = []
    for name, text in expected.items():
        path = directory / name
        if not path.exists():
            problems.append(f"{path}: missing")
        elif path.read_text() != text:
            problems.append(f"{path}: differs from the models")
    for path in sorted(directory.glob("*.yaml")) if directory.exists() else []:
        if path.name not in expected:
            problems.append(f"{path}: not generated from tau/api")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tau.api.crds", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--output-dir", type=Path, default=CRD_DIR)
    parser.add_argument("--check", action="store_true", help="verify instead of writing")
    args = parser.parse_args(argv)
    if args.check:
        problems = differences(args.output_dir)
        for problem in problems:
            print(f"error: {problem}; run `python -m tau.api.crds`", file=sys.stderr)
        return 1 if problems else 0
    args.output_dir.mkdir(parents=True, exist_ok=True)
    for name, text in render_all().items():
        (args.output_dir / name).write_text(text)
        print(args.output_dir / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())

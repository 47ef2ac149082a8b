"""`tau cluster explain-values`: the values reference, generated from the chart itself.

Descriptions are the `# --` comments directly above each key in the umbrella's and the
first-party sub-charts' values.yaml files (sub-chart keys are shown under their sub-chart
prefix, with the umbrella's override as the default); types come from values.schema.json.
A mapping whose children carry no `# --` comments is one documented value (e.g. nodeLabels).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau import safeyaml
from tau.errors import UsageError

FIRST_PARTY = ("tau-core-controller", "taugrid-core", "gpu-monitoring")
_KEY = re.compile(r"^(\s*)([A-Za-z0-9_.\-/\"']+):(\s+.*)?$")
_BLOCK = re.compile(r"[|>][-+]?\s*$")


@dataclass(frozen=True)
class ValueDoc:
    key: str
    type: str
    default: Any
    description: str


def default_chart() -> Path | None:
    """The chart of the source checkout this package runs from, else the one the wheel ships."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package.parent / "charts" / "taugrid", package / "_charts" / "taugrid"):
        if (candidate / "values.yaml").is_file():
            return candidate
    return None


def comment_docs(text: str) -> dict[str, str]:
    """Key path -> description from `# --` comments (lists and block scalars are leaves)."""
    docs: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    in_comment = False
    skip_deeper_than: int | None = None
    for raw in text.splitlines():
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if skip_deeper_than is not None:
            if not stripped or indent > skip_deeper_than:
                continue
            skip_deeper_than = None
        if stripped.startswith("# --"):
            pending, in_comment = [stripped[4:].strip()], True
            continue
        if stripped.startswith("#"):
            if in_comment:
                pending.append(stripped[1:].strip())
            continue
        in_comment = False
        if not stripped:
            pending = []
            continue
        if stripped.startswith("- "):
            skip_deeper_than = indent
            pending = []
            continue
        match = _KEY.match(raw)
        if not match:
            pending = []
            continue
        key = match.group(2).strip("\"'")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([k for _, k in stack] + [key])
        if pending:
            docs[path] = " ".join(p for p in pending if p)
        pending = []
        rest = (match.group(3) or "").strip()
        if _BLOCK.search(rest):
            skip_deeper_than = indent
        elif not rest:
            stack.append((indent, key))
    return docs


def _schema_at(schema: dict[str, Any], path: list[str]) -> dict[str, Any]:
    node = schema
    for part in path:
        node = (node.get("properties") or {}).get(part) or {}
    return node


def _type_name(schema: dict[str, Any], default: Any) -> str:
    kind = schema.get("type")
    if kind:
        return kind if isinstance(kind, str) else "|".join(kind)
    if "anyOf" in schema:
        return "quantity"
    return {bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}.get(
        type(default), "any"
    )


def _walk(values: Any, docs: dict[str, str], prefix: list[str], out: list[tuple[str, Any]]) -> None:
    for key, value in (values or {}).items():
        path = [*prefix, str(key)]
        out.append((".".join(path), value))
        dotted = ".".join(path)
        if isinstance(value, dict) and any(k.startswith(dotted + ".") for k in docs):
            _walk(value, docs, path, out)


def collect(chart_dir: Path) -> tuple[list[ValueDoc], list[str]]:
    """Every documented value, plus the keys that lack a description (should be none)."""
    schema = json.loads((chart_dir / "values.schema.json").read_text())
    umbrella_text = (chart_dir / "values.yaml").read_text()
    umbrella = safeyaml.load(umbrella_text) or {}
    docs = comment_docs(umbrella_text)
    merged: dict[str, Any] = {k: v for k, v in umbrella.items() if k not in FIRST_PARTY}
    for sub in FIRST_PARTY:
        text = (chart_dir / "charts" / sub / "values.yaml").read_text()
        docs.update({f"{sub}.{k}": v for k, v in comment_docs(text).items()})
        sub_values = safeyaml.load(text) or {}
        merged[sub] = _merge(sub_values, umbrella.get(sub) or {})
        docs.setdefault(sub, f"Values of the first-party {sub} sub-chart.")
    for key, node in (schema.get("properties") or {}).items():
        if key not in merged and node.get("description"):
            docs.setdefault(key, node["description"])
    items: list[tuple[str, Any]] = []
    _walk(merged, docs, [], items)
    undocumented = [key for key, _ in items if key not in docs]
    refs = [
        ValueDoc(
            key, _type_name(_schema_at(schema, key.split(".")), value), value, docs.get(key, "")
        )
        for key, value in items
    ]
    optional = _schema_only(schema, merged)
    return refs + optional, undocumented


def _schema_only(schema: dict[str, Any], merged: dict[str, Any]) -> list[ValueDoc]:
    """Keys the schema documents that values.yaml leaves unset on purpose."""
    found = []
    components = (schema.get("properties") or {}).get("components") or {}
    for key, node in (components.get("properties") or {}).items():
        if key not in (merged.get("components") or {}) and node.get("description"):
            found.append(
                ValueDoc(f"components.{key}.enabled", "boolean", "(unset)", node["description"])
            )
    return found


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        out[key] = (
            _merge(out[key], value)
            if isinstance(value, dict) and isinstance(out.get(key), dict)
            else value
        )
    return out


def _show(value: Any) -> str:
    if isinstance(value, str):
        text = value if "\n" not in value else "(multi-line text)"
    else:
        text = json.dumps(value, separators=(", ", ": "))
    return text if len(text) <= 60 else text[:57] + "..."


def markdown(chart_dir: Path | None) -> str:
    fetch = "e.g. `helm pull oci://mcr.microsoft.com/aks/ai-runtime/helm/taugrid --untar`"
    if chart_dir is None:
        raise UsageError(
            "no chart to explain: pass --chart with a local TauGrid chart directory", hint=fetch
        )
    if not (chart_dir / "values.yaml").is_file():
        raise UsageError(f"--chart {chart_dir}: not a chart directory (no values.yaml)", hint=fetch)
    refs, _ = collect(chart_dir)
    lines = [
        "# TauGrid install values",
        "",
        "The Helm release namespace (`tau cluster install --namespace`) is the only namespace "
        "setting; every system component follows it.",
        "",
        "| Key | Type | Default | Description |",
        "|---|---|---|---|",
    ]
    for ref in refs:
        default = _show(ref.default).replace("|", "\\|")
        lines.append(
            f"| `{ref.key}` | {ref.type} | `{default}` | {ref.description.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"

"""`tau cluster explain-values`: the values reference, generated from the chart itself.

Descriptions are the `# --` comments directly above each key in the umbrella's and the
first-party sub-charts' values.yaml files (sub-chart keys are shown under their sub-chart
prefix, with the umbrella's override as the default); types come from values.schema.json.
A mapping whose children carry no `# --` comments is one documented value (e.g. nodeLabels).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tau import safeyaml
from tau.errors import UsageError

FIRST_PARTY = ("tau-core-controller", "taugrid-core", "gpu-monitoring")


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
    """Key path -> description from the `# --` comment block directly above each key.

    The key tree is the YAML parser's (`tau.safeyaml.compose`, PyYAML), so keys inside lists,
    block scalars and flow mappings are never mistaken for values of their own. PyYAML drops
    comments, so only the comment lines themselves are read from the text, above each key's
    line."""
    lines = text.splitlines()
    docs: dict[str, str] = {}

    def above(line: int) -> str | None:
        block: list[str] = []
        while line > 0 and lines[line - 1].strip().startswith("#"):
            line -= 1
            block.insert(0, lines[line].strip())
        starts = [i for i, comment in enumerate(block) if comment.startswith("# --")]
        if not starts:
            return None
        first, *more = block[starts[-1] :]
        parts = [first[4:].strip(), *(comment[1:].strip() for comment in more)]
        return " ".join(part for part in parts if part)

    def walk(node: yaml.Node | None, prefix: list[str]) -> None:
        if not isinstance(node, yaml.MappingNode) or node.flow_style:
            return
        for key, value in node.value:
            path = [*prefix, str(key.value)]
            described = above(key.start_mark.line)
            if described is not None:
                docs[".".join(path)] = described
            walk(value, path)

    walk(safeyaml.compose(text), [])
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

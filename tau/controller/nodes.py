"""TauCluster node label rules: validation, conflicts, and the per-node plan.

Rules map Azure VM sizes to labels (the chart ships the GPU catalog). Observe mode only
reports drift; Reconcile mode merge-patches the missing labels and never removes a key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tau import keys

RESERVED_PREFIXES = ("kubernetes.io/", "node.kubernetes.io/")
_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def label_key_problem(key: str) -> str:
    prefix, _, name = key.rpartition("/")
    if key.startswith(RESERVED_PREFIXES):
        return f"label key {key!r} uses a reserved prefix ({', '.join(RESERVED_PREFIXES)})"
    if "/" in key and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        return f"label key {key!r} has an invalid prefix"
    if not name or len(name) > 63 or not _NAME.match(name):
        return f"label key {key!r} is not a qualified name"
    return ""


def rule_problems(rules: list[dict[str, Any]]) -> list[str]:
    """Static validation of every rule: qualified keys, no reserved prefixes, valid values."""
    problems = []
    for index, rule in enumerate(rules):
        labels = rule.get("labels") or {}
        if not labels:
            problems.append(f"labelRules[{index}]: labels must not be empty")
        for key in sorted(labels):
            problem = label_key_problem(key)
            if problem:
                problems.append(f"labelRules[{index}]: {problem}")
            value = str(labels[key])
            if len(value) > 63 or not _VALUE.match(value):
                problems.append(f"labelRules[{index}]: label {key}={value!r} has an invalid value")
    return problems


def _vm_sizes(rule: dict[str, Any]) -> set[str]:
    return set((rule.get("match") or {}).get("vmSizes") or [])


def rule_conflicts(rules: list[dict[str, Any]]) -> list[str]:
    """Pairs of overlapping rules that assign different values to the same key."""
    conflicts = []
    for i, first in enumerate(rules):
        for j in range(i + 1, len(rules)):
            second = rules[j]
            a, b = _vm_sizes(first), _vm_sizes(second)
            if a and b and not a & b:
                continue
            for key in sorted(set(first.get("labels") or {}) & set(second.get("labels") or {})):
                if first["labels"][key] != second["labels"][key]:
                    conflicts.append(
                        f"labelRules[{i}] and labelRules[{j}] both match"
                        f" {', '.join(sorted(a & b)) if a and b else 'every node'} but set"
                        f" {key} to {first['labels'][key]!r} and {second['labels'][key]!r}"
                    )
    return conflicts


def desired_labels(rules: list[dict[str, Any]], vm_size: str) -> tuple[dict[str, str], bool]:
    """Union of the labels of every rule matching `vm_size`, and whether values clashed."""
    wanted: dict[str, str] = {}
    clash = False
    for rule in rules:
        sizes = _vm_sizes(rule)
        if sizes and vm_size not in sizes:
            continue
        for key, value in (rule.get("labels") or {}).items():
            if wanted.get(key, value) != value:
                clash = True
            wanted.setdefault(key, value)
    return wanted, clash


def selected(node: dict[str, Any], selector: dict[str, str]) -> bool:
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(key) == value for key, value in selector.items())


@dataclass
class NodePlan:
    observed: int = 0
    ready: int = 0
    drifted: int = 0
    patches: dict[str, dict[str, str]] = field(default_factory=dict)
    clashes: list[str] = field(default_factory=list)


def plan_nodes(
    rules: list[dict[str, Any]], nodes: list[dict[str, Any]], selector: dict[str, str]
) -> NodePlan:
    """Which selected, matching nodes lack labels (their missing labels) and which are ready."""
    plan = NodePlan()
    by_size: dict[str, tuple[dict[str, str], bool]] = {}  # a fleet has a handful of VM sizes
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        if not selected(node, selector):
            continue
        labels = node["metadata"].get("labels") or {}
        size = labels.get(keys.INSTANCE_TYPE_LABEL, "")
        if size not in by_size:
            by_size[size] = desired_labels(rules, size)
        wanted, clash = by_size[size]
        if not wanted:
            continue
        plan.observed += 1
        if clash:
            plan.clashes.append(node["metadata"]["name"])
            plan.drifted += 1
            continue
        missing = {key: value for key, value in wanted.items() if labels.get(key) != value}
        if missing:
            plan.patches[node["metadata"]["name"]] = missing
        else:
            plan.ready += 1
    return plan

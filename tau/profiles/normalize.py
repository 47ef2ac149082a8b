"""The canonical form of a workload profile and the hash of a resolved profile set.

The controller and every reader compute `profile_set_hash` the same way, so a reader can
prove the status it sees is internally consistent before trusting it.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from pydantic import ValidationError

from tau.api.cluster import MULTIKUEUE_TARGET, WorkloadProfile

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
INTENT_FIELDS = (
    "name",
    "description",
    "applicability",
    "gpusPerWorker",
    "workerCount",
    "mode",
    "placement",
    "defaultLocalQueue",
    "executionTarget",
    "disableDefaultPriorities",
    "priorities",
)
IDENTITY_LISTS = (
    "clusterQueues",
    "resourceFlavors",
    "topologies",
    "workloadPriorityClasses",
    "podPriorityClasses",
)
SCOPES = ("teams", "lanes", "namespaces")


def normal_name(value: str) -> str:
    text = re.sub(r"[_\s]", "-", str(value).strip().lower())
    return text.strip(".")


def normal_label(value: str) -> str:
    return re.sub(r"[_\s]", "-", str(value).strip().lower())


def normal_target(value: str | None) -> str:
    text = str(value or "").strip()
    if not text or text.lower() == "singlecluster":
        return "singleCluster"
    if text.lower() == MULTIKUEUE_TARGET.lower():
        return MULTIKUEUE_TARGET
    return text


def normalize(profile: dict[str, Any]) -> dict[str, Any]:
    """The intent fields of `profile` in normal form (wire names, empty fields omitted)."""
    out: dict[str, Any] = {}
    for key in INTENT_FIELDS:
        value = profile.get(key)
        if value is None:
            continue
        if key in ("name", "defaultLocalQueue"):
            value = normal_name(value)
        elif key == "description":
            value = str(value).strip()
            if not value:
                continue
        elif key in ("mode", "placement"):
            value = normal_label(value)
        elif key == "executionTarget":
            value = normal_target(value)
        elif key == "applicability":
            scope = {}
            for field in SCOPES:
                entries = value.get(field) or []
                fn = normal_name if field == "namespaces" else normal_label
                entries = sorted(fn(entry) for entry in entries)
                if entries:
                    scope[field] = entries
            if not scope:
                continue
            value = scope
        elif key == "priorities":
            value = {k: normal_name(v) for k, v in value.items() if v}
            if not value:
                continue
        out[key] = value
    out.setdefault("executionTarget", "singleCluster")
    return out


def validation_problems(profile: dict[str, Any]) -> list[str]:
    """Why a declared profile is invalid (empty when it is valid and in normal form)."""
    problems: list[str] = []
    intent = {key: profile[key] for key in INTENT_FIELDS if profile.get(key) is not None}
    intent.setdefault("executionTarget", "singleCluster")
    try:
        WorkloadProfile.model_validate(intent)
    except ValidationError as error:
        for item in error.errors():
            where = ".".join(str(part) for part in item["loc"])
            problems.append(f"{where}: {item['msg']}" if where else item["msg"])
    name = str(profile.get("name", ""))
    if name and not DNS1123_SUBDOMAIN.match(normal_name(name)):
        problems.append(f"name {name!r} is not a DNS-1123 subdomain")
    scope = profile.get("applicability") or {}
    for field in SCOPES:
        entries = [str(entry) for entry in scope.get(field) or []]
        if any(not entry.strip() for entry in entries):
            problems.append(f"applicability.{field} has an empty entry")
        if len(set(entries)) != len(entries):
            problems.append(f"applicability.{field} has duplicate entries")
        for entry in entries:
            ok = (
                DNS1123_SUBDOMAIN.match(entry)
                if field == "namespaces"
                else LABEL_VALUE.match(entry)
            )
            if entry.strip() and not ok:
                kind = "a DNS-1123 subdomain" if field == "namespaces" else "a label value"
                problems.append(f"applicability.{field} entry {entry!r} is not {kind}")
    if not problems and normalize(profile) != _present(intent):
        problems.append(
            f"profile {name!r} is not in normal form (lowercase, '-' separators, sorted"
            " applicability); declare it as its normalized form"
        )
    return sorted(set(problems))


def _present(intent: dict[str, Any]) -> dict[str, Any]:
    out = dict(intent)
    if isinstance(out.get("description"), str) and not out["description"]:
        out.pop("description")
    scope = out.get("applicability")
    if isinstance(scope, dict):
        scope = {k: v for k, v in scope.items() if v}
        if scope:
            out["applicability"] = scope
        else:
            out.pop("applicability")
    return out


def hash_record(profile: dict[str, Any]) -> dict[str, Any]:
    """Intent plus resolved identities, normalized; conditions and live data excluded."""
    record = normalize(profile)
    queues = []
    seen = set()
    for lq in profile.get("localQueues") or []:
        entry = {
            "namespace": normal_name(lq.get("namespace", "")),
            "name": normal_name(lq.get("name", "")),
        }
        if lq.get("clusterQueue"):
            entry["clusterQueue"] = normal_name(lq["clusterQueue"])
        if (entry["namespace"], entry["name"]) in seen:
            raise ValueError(
                f"profile {record.get('name')}: duplicate LocalQueue"
                f" {entry['namespace']}/{entry['name']}"
            )
        seen.add((entry["namespace"], entry["name"]))
        queues.append(entry)
    if queues:
        record["localQueues"] = sorted(queues, key=lambda q: (q["namespace"], q["name"]))
    for key in IDENTITY_LISTS:
        values = sorted({normal_name(v) for v in profile.get(key) or [] if str(v).strip()})
        if values:
            record[key] = values
    return record


def profile_set_hash(profiles: list[dict[str, Any]]) -> str:
    """Lowercase hex SHA-256 of the sorted, normalized records; ValueError on duplicates."""
    records = [hash_record(p) for p in profiles]
    names = [r.get("name") for r in records]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate workload profile names: {', '.join(map(str, duplicates))}")
    records.sort(key=lambda r: r.get("name", ""))
    encoded = json.dumps(records, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(encoded.encode()).hexdigest()

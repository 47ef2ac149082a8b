"""The canonical form of a workload profile and the hash of a resolved profile set.

The controller, `tau run`, `tau serve`, `tau cluster profiles export` and snapshot decoding
all call `profile_set_hash`, and so does the upstream (Go) distribution: a reader trusts a
published profile set only if it recomputes the same digest. Interoperating with upstream
therefore pins every detail to upstream's behaviour — Go's whitespace trimming and lowercasing,
the CRD's field names in Go struct order, `omitempty` semantics (the `applicability` and
`priorities` objects are always present, empty strings and lists are not), validation before
hashing, and Go's `encoding/json` bytes (`tau.profiles.gojson`).
"""

from __future__ import annotations

import hashlib
import re

from pydantic import ValidationError

from tau.api.cluster import MULTIKUEUE_TARGET, WorkloadProfile
from tau.jsontypes import JSONObject
from tau.profiles.gojson import marshal

DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
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
    "priorities",
)
PRIORITY_NAMES = ("workloadPriorityClassName", "podPriorityClassName")
DISABLE_PRIORITIES = "disableDefaultPriorities"
IDENTITY_LISTS = (
    "clusterQueues",
    "resourceFlavors",
    "topologies",
    "workloadPriorityClasses",
    "podPriorityClasses",
)
SCOPES = ("teams", "lanes", "namespaces")
# Go's unicode.IsSpace; Python's str.strip() also strips U+001C..U+001F.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"  # noqa: E501


def go_trim_space(value: str) -> str:
    return value.strip(_GO_SPACE)


def _go_lower(value: str) -> str:
    """Go's strings.ToLower: per-rune simple case mapping (Python maps U+0130 to two runes)."""
    if value.isascii():
        return value.lower()
    return "".join("i" if char == "\u0130" else char.lower() for char in value)


def normal_label(value: str) -> str:
    return _go_lower(go_trim_space(str(value))).replace("_", "-").replace(" ", "-")


def normal_name(value: str) -> str:
    return normal_label(value).strip(".")


def normal_target(value: str | None) -> str:
    text = go_trim_space(str(value or ""))
    lowered = _go_lower(text)
    if lowered in ("", "singlecluster"):
        return "singleCluster"
    if lowered == MULTIKUEUE_TARGET.lower():
        return MULTIKUEUE_TARGET
    return text


def _normal_priorities(value: JSONObject) -> JSONObject:
    out: JSONObject = {}
    for key in PRIORITY_NAMES:
        name = normal_name(value.get(key) or "")
        if name:
            out[key] = name
    if value.get(DISABLE_PRIORITIES) is not None:
        out[DISABLE_PRIORITIES] = value[DISABLE_PRIORITIES]
    return out


def normalize(profile: JSONObject) -> JSONObject:
    """The intent fields of `profile` in normal form (wire names, empty fields omitted)."""
    out: JSONObject = {}
    for key in INTENT_FIELDS:
        value = profile.get(key)
        if value is None:
            continue
        if key in ("name", "defaultLocalQueue"):
            value = normal_name(value)
        elif key == "description":
            value = go_trim_space(str(value))
            if not value:
                continue
        elif key in ("mode", "placement"):
            value = normal_label(value)
        elif key == "executionTarget":
            value = normal_target(value)
        elif key == "applicability" and isinstance(value, dict):
            scope = {}
            for field in SCOPES:
                fn = normal_name if field == "namespaces" else normal_label
                entries = sorted(fn(entry) for entry in value.get(field) or [])
                if entries:
                    scope[field] = entries
            if not scope:
                continue
            value = scope
        elif key == "priorities" and isinstance(value, dict):
            value = _normal_priorities(value)
            if not value:
                continue
        out[key] = value
    out.setdefault("executionTarget", "singleCluster")
    return out


def normalize_resolved(profile: JSONObject) -> JSONObject:
    """Intent, resolved identities (sets deduplicated and sorted) and conditions (by type).

    ValueError when two LocalQueues share a namespace and name.
    """
    out = normalize(profile)
    queues = []
    seen = set()
    for lq in profile.get("localQueues") or []:
        entry = {
            "namespace": normal_name(lq.get("namespace") or ""),
            "name": normal_name(lq.get("name") or ""),
            "clusterQueue": normal_name(lq.get("clusterQueue") or ""),
        }
        where = (entry["namespace"], entry["name"])
        if where in seen:
            raise ValueError(
                f"profile {out.get('name')!r}: duplicate LocalQueue {where[0]}/{where[1]}"
            )
        seen.add(where)
        queues.append(entry)
    if queues:
        out["localQueues"] = sorted(queues, key=lambda q: (q["namespace"], q["name"]))
    for key in IDENTITY_LISTS:
        values = sorted({normal_name(v) for v in profile.get(key) or []} - {""})
        if values:
            out[key] = values
    # Tau's own observation, outside upstream's hash: kept only for flavors the hashed
    # resourceFlavors list names, so it cannot add a flavor the hash does not cover.
    flavors = set(out.get("resourceFlavors") or [])
    published = profile.get("flavorGpuClasses")
    classes = {
        normal_name(str(flavor)): normal_label(str(gpu_class))
        for flavor, gpu_class in (published.items() if isinstance(published, dict) else ())
        if normal_name(str(flavor)) in flavors
    }
    if isinstance(published, dict):
        out["flavorGpuClasses"] = dict(sorted(classes.items()))
    if profile.get("conditions"):
        out["conditions"] = sorted(profile["conditions"], key=lambda c: str(c.get("type", "")))
    return out


def _dns_subdomain(value: str) -> bool:
    return len(value) <= 253 and DNS1123_SUBDOMAIN.fullmatch(value) is not None


def _label_value(value: str) -> bool:
    return len(value) <= 63 and LABEL_VALUE.fullmatch(value) is not None


def validation_problems(profile: JSONObject) -> list[str]:
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
    if name and not _dns_subdomain(normal_name(name)):
        problems.append(f"name {name!r} is not a DNS-1123 subdomain")
    scope = profile.get("applicability") or {}
    for field in SCOPES if isinstance(scope, dict) else ():
        entries = [str(entry) for entry in scope.get(field) or []]
        if any(not entry.strip() for entry in entries):
            problems.append(f"applicability.{field} has an empty entry")
        if len(set(entries)) != len(entries):
            problems.append(f"applicability.{field} has duplicate entries")
        for entry in entries:
            ok = _dns_subdomain(entry) if field == "namespaces" else _label_value(entry)
            if entry.strip() and not ok:
                kind = "a DNS-1123 subdomain" if field == "namespaces" else "a label value"
                problems.append(f"applicability.{field} entry {entry!r} is not {kind}")
    if not problems and normalize(profile) != _present(intent):
        problems.append(
            f"profile {name!r} is not in normal form (lowercase, '-' separators, sorted"
            " applicability); declare it as its normalized form"
        )
    return sorted(set(problems))


def _present(intent: JSONObject) -> JSONObject:
    out = dict(intent)
    if isinstance(out.get("description"), str) and not out["description"]:
        out.pop("description")
    for key in ("applicability", "priorities"):
        block = out.get(key)
        if isinstance(block, dict):
            block = {k: v for k, v in block.items() if v not in (None, [], "")}
            if block:
                out[key] = block
            else:
                out.pop(key)
    return out


def _hash_problems(resolved: JSONObject) -> list[str]:
    """What upstream refuses to hash: an invalid intent, a value Go cannot decode into the
    CRD's types, or a resolved identity that is not a Kubernetes object name."""
    problems = validation_problems(resolved)
    for key in ("gpusPerWorker", "workerCount"):
        value = resolved.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append(f"{key} must be an integer, got {value!r}")
    disable = (resolved.get("priorities") or {}).get(DISABLE_PRIORITIES)
    if disable is not None and not isinstance(disable, bool):
        problems.append(f"priorities.{DISABLE_PRIORITIES} must be a boolean, got {disable!r}")
    for lq in resolved.get("localQueues") or []:
        for field in ("namespace", "name", "clusterQueue"):
            if not _dns_subdomain(lq[field]):
                problems.append(f"localQueues.{field} {lq[field]!r} is not a DNS-1123 subdomain")
    for key in IDENTITY_LISTS:
        for value in resolved.get(key) or []:
            if not _dns_subdomain(value):
                problems.append(f"{key} entry {value!r} is not a DNS-1123 subdomain")
    return problems


def hash_record(resolved: JSONObject) -> JSONObject:
    """The Go struct upstream hashes for one normalized resolved profile, field for field."""
    scope = resolved.get("applicability") or {}
    priorities = resolved.get("priorities") or {}
    record: JSONObject = {"name": resolved.get("name", "")}
    if resolved.get("description"):
        record["description"] = resolved["description"]
    record["applicability"] = {field: scope[field] for field in SCOPES if scope.get(field)}
    record["gpusPerWorker"] = resolved.get("gpusPerWorker", 0)
    record["workerCount"] = resolved.get("workerCount", 0)
    for key in ("mode", "placement", "defaultLocalQueue", "executionTarget"):
        record[key] = resolved.get(key, "")
    record["priorities"] = {key: priorities[key] for key in PRIORITY_NAMES if key in priorities}
    if priorities.get(DISABLE_PRIORITIES):
        record["priorities"][DISABLE_PRIORITIES] = True
    for key in ("localQueues", *IDENTITY_LISTS):
        if resolved.get(key):
            record[key] = resolved[key]
    return record


def resolved_profiles(profiles: list[JSONObject]) -> list[JSONObject]:
    """Every profile normalized and valid, sorted by name; ValueError names the first fault."""
    out = []
    for profile in profiles:
        resolved = normalize_resolved(profile)
        problems = _hash_problems(resolved)
        if problems:
            raise ValueError(f"profile {profile.get('name')!r}: {'; '.join(problems)}")
        out.append(resolved)
    names = [p.get("name") for p in out]
    duplicates = sorted({str(n) for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate workload profile names: {', '.join(duplicates)}")
    return sorted(out, key=lambda p: p.get("name", ""))


def profile_set_hash(profiles: list[JSONObject]) -> str:
    """Upstream's profileSetHash: lowercase hex SHA-256 of the Go encoding of the sorted
    records (conditions and live data excluded); ValueError when upstream could not hash."""
    records = [hash_record(p) for p in resolved_profiles(profiles)]
    return hashlib.sha256(marshal(records)).hexdigest()

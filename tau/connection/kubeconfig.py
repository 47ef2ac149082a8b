"""Isolated kubeconfig copies: exactly one context, its cluster and its user.

A repository's commands must not depend on (or change) whatever context the user's shell
happens to select, and must not read credentials of unrelated clusters. Tau copies only the
named context from the user's kubeconfig (KUBECONFIG rules, first definition wins) into a
private file it controls; relative certificate paths are made absolute so the copy keeps
working from its new location.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import yaml

from tau import keys, safeyaml
from tau.connection.localstate import write_private
from tau.jsontypes import JSONObject
from tau.kube.errors import AccessError

_PATH_FIELDS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}


def user_kubeconfig_files() -> list[Path]:
    """The files kubectl would read: `$KUBECONFIG` (path list) or ~/.kube/config."""
    configured = os.environ.get(keys.ENV_KUBECONFIG, "")
    if configured:
        return [Path(part).expanduser() for part in configured.split(os.pathsep) if part]
    return [Path("~/.kube/config").expanduser()]


def load_merged(files: list[Path] | None = None) -> JSONObject:
    """Merge kubeconfig files the kubectl way: the first file defining a name wins."""
    merged: dict[str, Any] = {"clusters": [], "users": [], "contexts": []}
    seen: dict[str, set[str | None]] = {"clusters": set(), "users": set(), "contexts": set()}
    for path in files if files is not None else user_kubeconfig_files():
        if not path.is_file():
            continue
        try:
            data = safeyaml.load(path.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, safeyaml.YamlRefused):
            raise AccessError(
                f"kubeconfig {path} is unreadable or not valid YAML",
                hint="fix or remove it from KUBECONFIG",
            ) from None
        if not isinstance(data, dict):
            continue
        merged.setdefault("current-context", data.get("current-context"))
        for section, entry_key in (("clusters", "cluster"), ("users", "user")):
            for item in data.get(section) or []:
                if isinstance(item, dict) and item.get("name") not in seen[section]:
                    seen[section].add(item.get("name"))
                    merged[section].append(_absolute(item, entry_key, path.parent))
        for item in data.get("contexts") or []:
            if isinstance(item, dict) and item.get("name") not in seen["contexts"]:
                seen["contexts"].add(item.get("name"))
                merged["contexts"].append(item)
    return merged


def _absolute(item: JSONObject, entry_key: str, base: Path) -> JSONObject:
    entry = dict(item.get(entry_key) or {})
    for field in _PATH_FIELDS[entry_key]:
        value = entry.get(field)
        if isinstance(value, str) and value and not os.path.isabs(value):
            entry[field] = str((base / value).resolve())
    return {**item, entry_key: entry}


def _named(config: JSONObject, section: str, name: str) -> JSONObject | None:
    for item in config.get(section) or []:
        if item.get("name") == name:
            found: dict[str, Any] = item
            return found
    return None


def isolate(config: JSONObject, context: str) -> JSONObject:
    """A kubeconfig holding only `context`, its cluster and its user."""
    entry = _named(config, "contexts", context)
    if entry is None:
        raise AccessError(
            f'Kubernetes context "{context}" is not in your kubeconfig',
            hint="get the context from your platform (e.g. `az aks get-credentials`) "
            "or check `kubectl config get-contexts`",
        )
    details = entry.get("context") or {}
    cluster = _named(config, "clusters", details.get("cluster", ""))
    user = _named(config, "users", details.get("user", ""))
    if cluster is None:
        raise AccessError(
            f'Kubernetes context "{context}" names cluster "{details.get("cluster", "")}" '
            "which is not in your kubeconfig"
        )
    isolated: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster],
        "contexts": [{"name": context, "context": details}],
        "current-context": context,
        "preferences": {},
        "users": [user] if user is not None else [],
    }
    return isolated


def cluster_fingerprint(config: JSONObject, context: str) -> str:
    """Identity of the cluster a context points at; changes force a human re-confirmation."""
    entry = _named(config, "contexts", context) or {}
    cluster = _named(config, "clusters", (entry.get("context") or {}).get("cluster", ""))
    encoded = json.dumps(cluster or {}, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(encoded.encode()).hexdigest()


def write_isolated(path: Path, config: JSONObject) -> Path:
    """Write atomically with mode 0600 (directory 0700)."""
    write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
    return path


def same_content(path: Path, config: JSONObject) -> bool:
    try:
        return bool(safeyaml.load(path.read_text(encoding="utf-8")) == config)
    except (OSError, UnicodeDecodeError, safeyaml.YamlRefused):
        return False

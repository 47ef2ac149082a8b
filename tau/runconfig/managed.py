"""The SDK-generated managed workflow manifest (`schema_version: 1`, no engine).

It is recognised by schema, not filename, and parsed permissively: unknown keys are warnings
with a did-you-mean suggestion, so a newer SDK can add fields without breaking older CLIs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tau.runconfig import catalog
from tau.runconfig.suggest import suggest_path

# Keys that belong to the managed workflow and never warn.
PASS_THROUGH = frozenset(
    {
        "eval",
        "artifacts",
        "research",
        "model",
        "resource_naming",
        "compute.cpus",
        "compute.cpu_limit",
        "compute.memory",
        "compute.memory_limit",
        "compute.worker_cpus",
        "compute.worker_cpu_limit",
        "compute.worker_memory",
        "compute.worker_memory_limit",
    }
)
# Containers whose children are themselves checked.
CHECKED_CONTAINERS = {
    "runtime.rdma": frozenset({"enabled", "resource_name", "count", "shm_size"}),
    "storage.mounts": frozenset({"name", "mountPath", "pvc", "readOnly"}),
}
# Free-form maps: their children are user data.
FREE_FORM = frozenset(
    {
        "policy.node_selector",
        "runtime.env",
        "runtime.env_secret",
        "runtime.env_kv",
        "execution.configs",
    }
)


def is_managed(data: Any) -> bool:
    """`schema_version` present and neither `engine` nor `run.engine` set."""
    if not isinstance(data, dict) or data.get("schema_version") is None:
        return False
    run = data.get("run")
    return not data.get("engine") and not (isinstance(run, dict) and run.get("engine"))


def known_paths() -> frozenset[str]:
    extra = {f"{parent}.{child}" for parent, kids in CHECKED_CONTAINERS.items() for child in kids}
    return catalog.paths() | PASS_THROUGH | set(CHECKED_CONTAINERS) | extra


@dataclass
class ManagedManifest:
    """A managed workflow manifest: kept as data; the SDK owns its full model."""

    data: dict[str, Any]
    sha256: str  # of the raw file bytes: the manifest's config hash (§3.2)
    unknown: list[tuple[tuple[str | int, ...], str]] = field(default_factory=list)

    @property
    def schema_version(self) -> Any:
        return self.data.get("schema_version")

    @property
    def name(self) -> str | None:
        run = self.data.get("run")
        value = (run.get("name") if isinstance(run, dict) else None) or self.data.get("name")
        return value if isinstance(value, str) else None


def parse(data: dict[str, Any], raw: bytes) -> ManagedManifest:
    import hashlib

    manifest = ManagedManifest(data=data, sha256=hashlib.sha256(raw).hexdigest())
    known = known_paths()
    _scan(data, (), "", known, manifest.unknown)
    return manifest


def _scan(
    node: Any,
    path: tuple[str | int, ...],
    dotted: str,
    known: frozenset[str],
    out: list[tuple[tuple[str | int, ...], str]],
) -> None:
    if isinstance(node, list):
        for i, item in enumerate(node):
            _scan(item, (*path, i), dotted, known, out)
        return
    if not isinstance(node, dict) or dotted in FREE_FORM or dotted in PASS_THROUGH:
        return
    for key, value in node.items():
        child = f"{dotted}.{key}" if dotted else str(key)
        if child in known:
            _scan(value, (*path, key), child, known, out)
            continue
        message = f'unknown config key "{child}" (ignored)'
        suggestion = _container_parent(value, known) or suggest_path(child, known)
        out.append(
            ((*path, key), message + (f'; did you mean "{suggestion}"?' if suggestion else ""))
        )


def _container_parent(value: Any, known: frozenset[str]) -> str | None:
    """For an unknown container whose children all live under one known parent, that parent."""
    if not isinstance(value, dict) or not value:
        return None
    parents: set[str] | None = None
    for key in value:
        owners = {p.rpartition(".")[0] for p in known if p.rpartition(".")[2] == key}
        owners.discard("")
        parents = owners if parents is None else parents & owners
    return next(iter(parents)) if parents and len(parents) == 1 else None

"""Shared constants, path helpers and the rule-checker base class."""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from tau import keys
from tau.runconfig.models import (
    Compute,
    Execution,
    RunConfig,
    Storage,
)

Path = tuple[str | int, ...]

SETTABLE_TAU_KEYS = keys.USER_SETTABLE_TAU_ENV
ENV_VALUE_LIMIT = 65536
ENV_TOTAL_LIMIT = 131072
TTL_MAX = 2147483647
MAX_IMAGE_ASSETS = 8
RESERVED_MOUNTS = (
    "/data",
    "/mnt",
    "/script",
    "/manifest",
    "/tmp",
    "/dev/shm",
    "/var/run/tau",
    "/tau/source",
)
TORCHRUN_MANAGED_FLAGS = frozenset(
    {
        "standalone",
        "nnodes",
        "nproc-per-node",
        "node-rank",
        "rdzv-backend",
        "rdzv-endpoint",
        "rdzv-id",
        "master-addr",
        "master-port",
        "module",
        "no-python",
        "run-path",
    }
)
RAY_TRAIN_SECTIONS = ("torch_config", "scaling_config", "failure_config")
SOURCE_STAGING = "/tau-source"

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
CONFIG_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
QUANTITY = re.compile(
    r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$"
)
MIG = re.compile(r"^\d+g\.\d+gb$")
SHAPE_COUNT = re.compile(r"^(\d+)x")
IDENTIFIER = re.compile(r"^[a-z0-9]([a-z0-9_.-]*[a-z0-9])?$")


def dotted(path: Path) -> str:
    """`("storage", "image_assets", 0, "name")` -> `storage.image_assets[0].name`.

    Keys that would make the path ambiguous (empty, dots, brackets, spaces) are quoted.
    """
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        name = part
        if not part or any(c in part for c in '.[]" ') or not part.isprintable():
            name = json.dumps(part, ensure_ascii=False)
        text += f".{name}" if text else name
    return text


def one_of(values: tuple[str, ...] | list[str]) -> str:
    return ", ".join(values)


def shape_gpu_count(shape: str | None) -> int | None:
    """GPUs encoded in a shape like `8xa100-80gb`."""
    match = SHAPE_COUNT.match(shape or "")
    return int(match.group(1)) if match else None


def job_gpu_count(config: RunConfig) -> int | None:
    """The Job pod's GPU count known from the config alone (compute.gpus, else the shape)."""
    compute = config.compute or Compute()
    if compute.gpus is not None:
        return compute.gpus
    return shape_gpu_count(config.policy.shape if config.policy else None)


def is_clean_absolute(path: str) -> bool:
    return (
        path == path.strip()
        and path.startswith("/")
        and "\\" not in path
        and posixpath.normpath(path) == path
        and not path.startswith("//")
    )


def is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def overlaps(a: str, b: str) -> bool:
    return is_under(a, b) or is_under(b, a)


class Base:
    """Shared state and helpers of the rule groups: one validated config and its raw YAML."""

    def __init__(self, config: RunConfig, raw: dict[str, Any]) -> None:
        self.config = config
        self.raw = raw
        self.problems: list[tuple[Path, str]] = []
        self.warnings: list[tuple[Path, str]] = []
        self.engine = config.engine_value
        self.launcher = config.launcher_value
        self.managed = config.is_managed_dispatch

    def add(self, path: Path, message: str) -> None:
        self.problems.append((path, message))

    def present(self, *path: str | int) -> bool:
        node: Any = self.raw
        for part in path:
            if isinstance(node, dict) and part in node and node[part] is not None:
                node = node[part]
            else:
                return False
        return True

    def raw_at(self, *path: str | int) -> Any:
        node: Any = self.raw
        for part in path:
            if not isinstance(node, dict):
                return None
            node = node.get(part)
        return node

    @property
    def intent(self) -> str:
        parts = []
        if self.config.explicit_engine:
            parts.append(f"engine={self.config.explicit_engine}")
        if self.config.workload_kind:
            parts.append(f"workload_kind={self.config.workload_kind}")
        return "/".join(parts) or "implicit dispatch"

    def engine_path(self) -> Path:
        return ("run", "engine") if self.present("run", "engine") else ("engine",)

    @property
    def nodes(self) -> int:
        return (self.config.execution or Execution()).nodes

    def entrypoint_path(self) -> Path:
        for path in (("run", "entrypoint"), ("run", "script"), ("entrypoint",), ("script",)):
            if self.raw_at(*path):
                return path
        return ("entrypoint",)

    def mount_paths(self) -> dict[str, bool]:
        """PVC-backed mount paths -> writable, as the renderer will mount them."""
        storage = self.config.storage or Storage()
        mounts: dict[str, bool] = {}
        if self.config.data_pvc:
            mounts["/data"] = True
        volumes = self.parsed_volumes()
        parsed_mounts = self.parsed_mounts()
        if len(volumes) == 1 and not parsed_mounts and storage.volumes:
            mounts["/data"] = True
        for _, target, read_only in parsed_mounts:
            mounts[target] = not read_only
        return mounts

    def parsed_volumes(self) -> dict[str, str]:
        volumes: dict[str, str] = {}
        for spec in (self.config.storage or Storage()).volumes or []:
            name, sep, rest = spec.partition("=")
            kind, _, claim = rest.partition(":")
            if sep and name and kind == "pvc" and claim:
                volumes.setdefault(name, claim)
        return volumes

    def parsed_mounts(self) -> list[tuple[str, str, bool]]:
        mounts = []
        for spec in (self.config.storage or Storage()).mounts or []:
            parts = spec.split(":")
            if len(parts) in (2, 3) and parts[0] and parts[1].startswith("/"):
                mode = parts[2] if len(parts) == 3 else "rw"
                if mode in ("ro", "rw"):
                    mounts.append((parts[0], parts[1], mode == "ro"))
        return mounts

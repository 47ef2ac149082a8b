"""Runtime, environment, `run.*` and managed-dispatch rules (reference §2.3-§2.5)."""

from __future__ import annotations

import posixpath

from tau import keys
from tau.runconfig.images import is_digest_pinned, pin_problem
from tau.runconfig.rules.base import (
    C_IDENTIFIER,
    ENV_TOTAL_LIMIT,
    ENV_VALUE_LIMIT,
    SETTABLE_TAU_KEYS,
    SOURCE_STAGING,
    TTL_MAX,
    Base,
    Path,
    is_clean_absolute,
    is_under,
)


class EnvironmentRules(Base):
    def runtime(self) -> None:
        runtime = self.config.runtime
        if runtime is None:
            return
        for i, entry in enumerate(runtime.pip or []):
            if not entry or entry != entry.strip():
                self.add(
                    ("runtime", "pip", i),
                    f"runtime.pip[{i}] must be non-empty without surrounding whitespace",
                )
        if runtime.pip and self.engine == "job":
            self.add(
                ("runtime", "pip"),
                f"{self.intent} cannot set runtime.pip; use engine: rayjob or bake dependencies "
                "into the image",
            )
        working_dir = runtime.working_dir
        if working_dir is not None:
            path: Path = ("runtime", "working_dir")
            run = self.config.run
            if not is_clean_absolute(working_dir):
                self.add(
                    path,
                    f'runtime.working_dir "{working_dir}" must be a clean absolute container path',
                )
            elif run and run.source:
                self.add(
                    path,
                    "runtime.working_dir cannot be combined with run.source; run.source fixes "
                    "the container working directory at /tau/source",
                )
            elif run and run.working_dir:
                self.add(path, "runtime.working_dir cannot be combined with run.working_dir")
            elif self.engine != "job":
                self.add(path, "runtime.working_dir requires engine: job")
        if runtime.security and runtime.security.mode not in (None, "restricted"):
            self.add(
                ("runtime", "security", "mode"),
                'runtime.security.mode must be "restricted" or omitted',
            )

    def environment(self) -> None:
        runtime = self.config.runtime
        if runtime is None:
            return
        env = runtime.env or {}
        secrets = runtime.env_secret or {}
        total = 0
        for name, value in env.items():
            size = len(value.encode())
            if not name or "=" in name:
                self.add(("runtime", "env", name), f"runtime.env name {name!r} is not valid")
            if size > ENV_VALUE_LIMIT:
                self.add(
                    ("runtime", "env", name),
                    f"literal environment variable {name!r} is {size} bytes; maximum is "
                    f"{ENV_VALUE_LIMIT} bytes: use run.source or storage.image_assets for content",
                )
            total += len(name.encode()) + 1 + size + 1
        if total > ENV_TOTAL_LIMIT:
            self.add(
                ("runtime", "env"),
                f"literal environment payload is {total} bytes; maximum is {ENV_TOTAL_LIMIT} "
                "bytes: use run.source or storage.image_assets for content",
            )
        for name, ref in secrets.items():
            where: Path = ("runtime", "env_secret", name)
            if not C_IDENTIFIER.match(name):
                self.add(
                    where,
                    f"runtime.env_secret.{name}: name must be a C identifier (letters, digits, _)",
                )
            secret, _, key = ref.partition(":")
            if (
                not secret
                or not key
                or ref != ref.strip()
                or secret != secret.strip()
                or key != key.strip()
            ):
                self.add(where, f'runtime.env_secret.{name}: expected SECRET:KEY, got "{ref}"')
            if name in env:
                self.add(
                    where,
                    f"runtime.env_secret.{name} conflicts with runtime.env.{name}; set each env "
                    "var in only one place",
                )
        allow_nccl = bool(self.config.execution and self.config.execution.allow_nccl_override)
        reserved = sorted(
            {
                name
                for name in (*env, *secrets)
                if name.upper() in (keys.ENV_MASTER_ADDR, keys.ENV_MASTER_PORT)
                or (name.upper().startswith(keys.TAU_ENV_PREFIX) and name not in SETTABLE_TAU_KEYS)
                or (name.upper().startswith(keys.NCCL_ENV_PREFIX) and not allow_nccl)
            }
        )
        if reserved:
            where = ("runtime", "env") if set(reserved) & set(env) else ("runtime", "env_secret")
            nccl = any(n.upper().startswith(keys.NCCL_ENV_PREFIX) for n in reserved)
            self.add(
                where,
                "runtime.env contains Tau-managed keys that cannot be overridden: "
                f"{', '.join(reserved)}; remove them from runtime.env (settable TAU_ keys: "
                f"{', '.join(SETTABLE_TAU_KEYS)})"
                + ("; set execution.allow_nccl_override: true to tune NCCL_*" if nccl else ""),
            )
        kv = runtime.env_kv or {}
        if kv and not self.managed:
            self.add(
                ("runtime", "env_kv"),
                "runtime.env_kv is only supported for workflow.file managed configs; direct "
                "Job/RayJob configs must remove runtime.env_kv or use workflow.file",
            )
        elif kv:
            vaults = set()
            for name, ref in kv.items():
                where = ("runtime", "env_kv", name)
                parts = ref.split("/")
                if len(parts) > 2 or not all(parts):
                    self.add(
                        where,
                        f"runtime.env_kv.{name}: expected secret-name or "
                        f'vault/secret-name, got "{ref}"',
                    )
                elif len(parts) == 2:
                    vaults.add(parts[0])
                if name in env or name in secrets:
                    self.add(
                        where,
                        f"runtime.env_kv.{name} conflicts with runtime.env/env_secret.{name}; set "
                        "each env var in only one place",
                    )
            if len(vaults) > 1:
                self.add(
                    ("runtime", "env_kv"),
                    f"runtime.env_kv entries must resolve to one Key Vault (got "
                    f"{', '.join(sorted(vaults))})",
                )

    def run_block(self) -> None:
        run = self.config.run
        if run is None:
            return
        if run.source is not None:
            path: Path = ("run", "source")
            entrypoint = self.config.entrypoint_value
            if self.engine != "job":
                self.add(path, "run.source requires engine: job")
            if self.managed:
                self.add(path, "run.source requires direct dispatch; remove workflow.file")
            if run.working_dir:
                self.add(path, "run.source cannot be combined with run.working_dir")
            if not run.source.image:
                self.add((*path, "image"), "run.source.image is required")
            elif not is_digest_pinned(run.source.image):
                self.add((*path, "image"), pin_problem("run.source.image"))
            source_path = run.source.path
            if not source_path:
                self.add((*path, "path"), "run.source.path is required")
            elif not is_clean_absolute(source_path) or source_path == "/":
                self.add(
                    (*path, "path"),
                    f'run.source.path "{source_path}" must be a clean absolute path below /',
                )
            elif is_under(source_path, SOURCE_STAGING):
                self.add(
                    (*path, "path"),
                    f'run.source.path "{source_path}" is hidden by Tau\'s staging volume '
                    f"{SOURCE_STAGING}",
                )
            if not entrypoint:
                self.add(path, "run.source requires entrypoint")
            elif (
                entrypoint.startswith("/")
                or "\\" in entrypoint
                or entrypoint in (".", "..")
                or entrypoint.startswith("../")
                or posixpath.normpath(entrypoint) != entrypoint
            ):
                self.add(
                    self.entrypoint_path(),
                    f'entrypoint "{entrypoint}" must be a clean relative path inside run.source',
                )
        ttl = run.ttl_seconds_after_finished
        if ttl is not None:
            path = ("run", "ttl_seconds_after_finished")
            if ttl <= 0:
                self.add(path, "run.ttl_seconds_after_finished must be > 0")
            elif ttl > TTL_MAX:
                self.add(
                    path,
                    f"run.ttl_seconds_after_finished must be <= {TTL_MAX} (Kubernetes int32 "
                    "maximum)",
                )
            if self.engine != "job":
                self.add(path, "run.ttl_seconds_after_finished requires engine: job")
        if run.working_dir is not None:
            path = ("run", "working_dir")
            entrypoint = self.config.entrypoint_value
            if entrypoint and not entrypoint.startswith("/"):
                root = posixpath.normpath(run.working_dir)
                target = posixpath.normpath(entrypoint)
                if root != "." and not is_under(target, root):
                    self.add(
                        path,
                        f'entrypoint "{entrypoint}" must be inside run.working_dir "{root}"',
                    )

    def managed_only(self) -> None:
        if not self.managed:
            return
        config = self.config
        rejected = {
            ("storage", "publish"): "storage.publish is not supported for managed workflow configs",
            ("policy", "clear_node_selector"): "policy.clear_node_selector requires native job "
            "dispatch; remove it or drop workflow.file",
            ("runtime", "working_dir"): "runtime.working_dir is not supported for managed "
            "workflow configs",
            ("storage", "image_assets"): "storage.image_assets is not supported for managed "
            "workflow configs",
            ("run", "ttl_seconds_after_finished"): "run.ttl_seconds_after_finished is not "
            "supported for managed workflow configs",
        }
        for path, message in rejected.items():
            value = getattr(getattr(config, path[0]) or object(), path[1], None)
            if value:
                self.add(path, message)

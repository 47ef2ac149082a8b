"""The environment contract every rendered workload container sees.

Scripts locate data, scratch and output through these `TAU_*` variables instead of
hard-coded paths, so the same code runs on any workspace. Tau-managed names win over
nothing: a user value for one of them is a render error, never a silent override.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from tau import keys
from tau.render.errors import RenderError
from tau.render.intent import RunIntent

DATA_DIR = "/data"
HOT_DIR = "/mnt"
STAGING_ROOT = "/mnt/tau-output"
LITERAL_VALUE_MAX = 65536
LITERAL_TOTAL_MAX = 131072


def storage_env(intent: RunIntent) -> dict[str, str]:
    """Data, scratch, output and retry/publish variables shared by Job and RayJob pods."""
    env: dict[str, str] = {}
    if intent.placement.profile:
        env[keys.ENV_PROFILE] = intent.placement.profile
    if intent.data_mounted:
        env.update(
            {
                keys.ENV_DATA_DIR: DATA_DIR,
                keys.ENV_HOT_DIR: HOT_DIR,
                keys.ENV_DATASETS_DIR: f"{HOT_DIR}/datasets",
                keys.ENV_CHECKPOINTS_DIR: f"{HOT_DIR}/checkpoints",
                keys.ENV_DURABLE_DATASETS_DIR: f"{DATA_DIR}/datasets",
                keys.ENV_DURABLE_CHECKPOINTS_DIR: f"{DATA_DIR}/checkpoints",
            }
        )
    if intent.output:
        env[keys.ENV_OUTPUT_DIR] = intent.output
    if intent.staged_publish:
        env[keys.ENV_OUTPUT_STAGING_DIR] = f"{STAGING_ROOT}/{intent.name}"
    return env


def profile_dir(intent: RunIntent) -> str:
    """Where profiler reports land: `<storage.output>/profile` (a PVC path, checked by the
    renderer)."""
    return f"{(intent.output or '').rstrip('/')}/profile"


def profiler_env(intent: RunIntent) -> dict[str, str]:
    """What the wrapper's profiler stage reads, and what a rank can read to find its report.

    `TAU_PROFILE_OUT` names the one report of a single selected rank; with rank `all` every
    rank writes its own, so `TAU_PROFILE_OUT_PATTERN` keeps a literal `<rank>` placeholder.
    """
    profiler = intent.profiler
    if profiler is None:
        return {}
    out = profile_dir(intent)
    env = {
        keys.ENV_PROFILE_MODE: profiler.mode,
        keys.ENV_PROFILE_TOOL: profiler.mode,
        keys.ENV_PROFILE_RANK: profiler.rank,
        keys.ENV_PROFILE_OUT_DIR: out,
        keys.ENV_PROFILE_RUN_ID: intent.name,
        keys.ENV_PROFILE_NAMESPACE: intent.namespace,
        keys.ENV_PROFILE_EXT: profiler.ext,
        keys.ENV_PROFILE_WARMUP_SEC: _whole_seconds(profiler.warmup),
        keys.ENV_PROFILE_ACTIVE_SEC: _whole_seconds(profiler.duration),
    }
    if profiler.rank == "all":
        env[keys.ENV_PROFILE_OUT_PATTERN] = f"{out}/rank-<rank>.{profiler.ext}"
    else:
        env[keys.ENV_PROFILE_OUT] = f"{out}/rank-{profiler.rank}.{profiler.ext}"
    return env


def _whole_seconds(seconds: float | None) -> str:
    """nsys takes whole seconds: a partial second rounds up, unset is 0 (no limit)."""
    return str(math.ceil(seconds)) if seconds else "0"


def container_env(
    intent: RunIntent,
    managed: Mapping[str, str],
    *,
    reserved: Iterable[str] = (),
    reserved_reason: str = "is managed by Tau",
) -> list[dict[str, object]]:
    """Managed variables plus the user's literal and secret env, sorted by name.

    `reserved` names (e.g. MASTER_ADDR for torchrun) may not appear in the user's env at
    all; any collision with a managed name is an error naming the field to change.
    """
    reserved_set = set(reserved)
    user = dict(intent.env)
    secrets = dict(intent.env_secret)
    for name in sorted({*user, *secrets}):
        field = "runtime.env_secret" if name in secrets else "runtime.env"
        if name in reserved_set:
            raise RenderError(f"{field}.{name} {reserved_reason} and must not be set in {field}")
        if name in managed:
            raise RenderError(
                f"{field}.{name} is set by Tau for this workload and cannot be overridden",
                hint=f"remove {name} from {field}",
            )
    _check_literal_sizes(user)
    entries: dict[str, dict[str, object]] = {}
    for name, value in {**managed, **user}.items():
        entries[name] = {"name": name, "value": value}
    for name, ref in secrets.items():
        entries[name] = {
            "name": name,
            "valueFrom": {"secretKeyRef": {"name": ref.secret, "key": ref.key}},
        }
    return [entries[name] for name in sorted(entries)]


def check_payload_value(name: str, value: str) -> None:
    """Generated embedded payloads share the 64 KiB cap of a literal env value."""
    size = len(value.encode())
    if size > LITERAL_VALUE_MAX:
        raise RenderError(
            f"generated environment variable {name} is {size} bytes; maximum is "
            f"{LITERAL_VALUE_MAX} bytes",
            hint="ship large content with run.source or storage.image_assets instead",
        )


def _check_literal_sizes(env: Mapping[str, str]) -> None:
    total = 0
    for name, value in env.items():
        size = len(value.encode())
        if size > LITERAL_VALUE_MAX:
            raise RenderError(
                f"literal environment variable {name!r} is {size} bytes; maximum is "
                f"{LITERAL_VALUE_MAX} bytes",
                hint="use run.source or storage.image_assets for content",
            )
        total += len(name.encode()) + 1 + size + 1
    if total > LITERAL_TOTAL_MAX:
        raise RenderError(
            f"literal environment payload is {total} bytes; maximum is {LITERAL_TOTAL_MAX} bytes",
            hint="use run.source or storage.image_assets for content",
        )

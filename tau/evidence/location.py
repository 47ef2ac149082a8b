"""Where the experiment store lives: `--store`, `TAU_EXP_STORE`, or the scoped composite.

The composite `TAU_EXP_STORE_ROOT/TAU_CONTEXT/TAU_TEAM/TAU_PROJECT` lets a platform give each
team and project its own store under one root without every user spelling the path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tau import keys
from tau.errors import UsageError

# The workspace store: on the workspace's data PVC (mounted at /data in every cluster run),
# written by the runs' offload sidecars and read by the Portal.
WORKSPACE_STORE_PATH = "/data/.tau/expstore"

ALL_OPTIONS = (
    "--store PATH",
    keys.ENV_EXP_STORE,
    f"{keys.ENV_EXP_STORE_ROOT} with {', '.join(keys.EXP_STORE_SCOPE_ENV)}",
)


def _scope_component(name: str, value: str) -> str:
    if not value or "/" in value or "\\" in value or value in (".", ".."):
        raise UsageError(
            f"{name}={value!r} must be one non-empty path component (no '/', not '.' or '..')",
            hint=f"set {name} to a single name, or set {keys.ENV_EXP_STORE} to a full path",
            owner="the user's environment",
        )
    return value


def resolve_store_path(flag: str | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The store directory for this invocation; the error names every accepted option."""
    env = os.environ if env is None else env
    if flag:
        return Path(flag).expanduser()
    direct = env.get(keys.ENV_EXP_STORE, "")
    if direct:
        return Path(direct).expanduser()
    root = env.get(keys.ENV_EXP_STORE_ROOT, "")
    if root:
        parts = [_scope_component(name, env.get(name, "")) for name in keys.EXP_STORE_SCOPE_ENV]
        return Path(root).expanduser().joinpath(*parts)
    raise UsageError(
        "no experiment store selected: pass --store PATH, set "
        f"{keys.ENV_EXP_STORE}=PATH, or set {keys.ENV_EXP_STORE_ROOT} together with "
        f"{keys.ENV_CONTEXT}, {keys.ENV_TEAM} and {keys.ENV_PROJECT}",
        owner="the user running the command",
    )

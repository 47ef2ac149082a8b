"""Where local runs live on this machine, and how the pod paths of the contract map onto it.

State (run records, logs) follows XDG_STATE_HOME; data (`/data`, the experiment store)
follows XDG_DATA_HOME. `/mnt` (an emptyDir on the cluster) is per attempt scratch inside
the run's state directory and is removed when the attempt ends, as a pod's would be.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tau import keys
from tau.render.env import DATA_DIR, HOT_DIR
from tau.render.volumes import SCRIPT_PATH

ENV_STATE_DIR = keys.ENV_LOCAL_STATE_DIR


def _xdg(variable: str, fallback: str) -> Path:
    base = os.environ.get(variable, "").strip() or os.path.join("~", fallback)
    return Path(base).expanduser()


def state_root() -> Path:
    """Run records: `$TAU_LOCAL_STATE_DIR`, else `$XDG_STATE_HOME/tau/local`."""
    explicit = os.environ.get(ENV_STATE_DIR, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    return _xdg(keys.ENV_XDG_STATE_HOME, ".local/state") / "tau" / "local"


def default_data_root() -> Path:
    """What `/data` means locally unless `--data-root` says otherwise."""
    return _xdg(keys.ENV_XDG_DATA_HOME, ".local/share") / "tau" / "data"


def default_store() -> Path:
    """The local experiment store: `$TAU_EXP_STORE` when set, else under the user data dir."""
    explicit = os.environ.get(keys.ENV_EXP_STORE, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    return _xdg(keys.ENV_XDG_DATA_HOME, ".local/share") / "tau" / "experiments"


@dataclass(frozen=True)
class PathMap:
    """Pod path -> local path for `/data`, `/mnt` and the RayJob `/script` payload dir."""

    data_root: Path
    hot_dir: Path
    script_dir: Path

    def local(self, pod_path: str) -> str:
        for prefix, root in (
            (DATA_DIR, self.data_root),
            (HOT_DIR, self.hot_dir),
            (SCRIPT_PATH, self.script_dir),
        ):
            if pod_path == prefix:
                return str(root)
            if pod_path.startswith(prefix + "/"):
                return str(root / pod_path[len(prefix) + 1 :])
        return pod_path

    def maps(self, pod_path: str) -> bool:
        return self.local(pod_path) != pod_path

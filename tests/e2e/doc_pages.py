"""Documentation pages run verbatim: their marked bash blocks, and the shell they assume.

A page marks a block with an HTML comment naming the test that runs it; the block is the
fenced ```bash that follows. `operator_shell` is the environment the local-cluster pages
start from: what `eval "$(python -m hack.localcluster env)"` exports for the session's
cluster (the default state directory's, through a symlink).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hack.localcluster import LocalCluster

REPO = Path(__file__).resolve().parents[2]


def page_block(page: Path, marker: str) -> str:
    text = page.read_text()
    assert marker in text, f"{page.name} lost the block marked {marker!r}"
    after = text.split(marker, 1)[1]
    match = re.match(r"\s*```bash\n(.*?)\n```", after, re.S)
    assert match, f"the marker {marker!r} is followed by a bash block"
    return match.group(1)


def operator_shell(cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What `eval "$(python -m hack.localcluster env)"` exports, read through that command."""
    state_home = tmp_path_factory.mktemp("xdg-state")
    default = state_home / "taugrid" / "localcluster" / "default"
    default.parent.mkdir(parents=True)
    default.symlink_to(cluster.state_dir, target_is_directory=True)
    venv_bin = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "XDG_STATE_HOME": str(state_home),
        "PATH": os.pathsep.join([venv_bin, os.environ["PATH"]]),
        "TAU_CONFIG_DIR": str(tmp_path_factory.mktemp("tau-config")),
    }
    exports = subprocess.run(
        [sys.executable, "-m", "hack.localcluster", "env"],
        capture_output=True, text=True, check=True, cwd=REPO, env=env,
    ).stdout  # fmt: skip
    printed = subprocess.run(
        ["bash", "-c", f'{exports}\nenv -0'],
        capture_output=True, text=True, check=True, env=env,
    ).stdout  # fmt: skip
    return dict(item.split("=", 1) for item in printed.split("\0") if "=" in item)

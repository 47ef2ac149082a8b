"""docs/local-cluster.md's "Install TauGrid on it", run verbatim against the session's cluster.

The page's bash block is taken from the page itself and run with bash from the repository root,
in the environment `eval "$(python -m hack.localcluster env)"` gives (the session cluster is the
default state directory's), so the page cannot drift from what works.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from controller_harness import get
from test_cluster_lifecycle import RELEASE_CLUSTER_OBJECTS

from hack.images import ImageRef
from hack.localcluster import LocalCluster

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "local-cluster.md"
MARKER = "<!-- tests/e2e/test_local_install_page.py runs this block verbatim -->"


def page_block() -> str:
    text = PAGE.read_text()
    assert MARKER in text, f"{PAGE.name} lost the install block's marker"
    after = text.split(MARKER, 1)[1]
    match = re.match(r"\s*```bash\n(.*?)\n```", after, re.S)
    assert match, "the marker is followed by a bash block"
    return match.group(1)


@pytest.fixture(scope="module")
def shell_env(local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """What `eval "$(python -m hack.localcluster env)"` exports, read through that command."""
    state_home = tmp_path_factory.mktemp("xdg-state")
    default = state_home / "taugrid" / "localcluster" / "default"
    default.parent.mkdir(parents=True)
    default.symlink_to(local_cluster.state_dir, target_is_directory=True)
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


def test_the_documented_local_install_installs_validates_and_uninstalls(
    local_cluster: LocalCluster, local_images: dict[str, ImageRef], shell_env: dict
) -> None:
    # Objects an earlier release of this session may have left; the page assumes a fresh plane.
    for resource, name in RELEASE_CLUSTER_OBJECTS:
        local_cluster.kubectl("delete", resource, name, "--ignore-not-found", check=False)
    assert shell_env["TAU_LOCAL_REGISTRY"] == local_cluster.registry
    done = subprocess.run(
        ["bash", "-euxo", "pipefail", "-c", page_block()],
        capture_output=True, text=True, cwd=REPO, env=shell_env, timeout=900, check=False,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    # The plan's images block names this checkout's images in the cluster's registry.
    for repository in ("tau-core-controller", "taugrid-portal"):
        assert f"{local_cluster.registry}/{repository}" in output
    assert "  release:     taugrid" in output
    assert re.search(r"READY: \d+/\d+", output)
    [components] = [line for line in output.splitlines() if line.startswith("  components:")]
    for component in ("Kueue", "KubeRay", "baseline queue"):
        assert component not in components, "the plan promises only what installs"
    for check in ("Kueue", "KubeRay", "Baseline queue"):
        assert re.search(rf"SKIP\s+{check}\b", output), f"{check} is reported SKIP"
    # Uninstalled: the release's Deployments are gone (their pods terminate), the CRDs stay.
    for name in ("tau-core-controller", "tau-portal"):
        assert get(local_cluster, "deployment", name, "-n", "tau-system") is None
    assert get(local_cluster, "crd", "workspaces.tau.azure.com") is not None

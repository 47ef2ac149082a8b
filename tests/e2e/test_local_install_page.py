"""docs/local-cluster.md's "Install TauGrid on it", run verbatim against the session's cluster.

The page's bash block is taken from the page itself and run with bash from the repository root,
in the environment `eval "$(python -m hack.localcluster env)"` gives (the session cluster is the
default state directory's), so the page cannot drift from what works.
"""

from __future__ import annotations

import re
import subprocess

import pytest
from controller_harness import get
from doc_pages import REPO, operator_shell, page_block
from test_cluster_lifecycle import RELEASE_CLUSTER_OBJECTS

from hack.images import ImageRef
from hack.localcluster import LocalCluster

PAGE = REPO / "docs" / "local-cluster.md"
MARKER = "<!-- tests/e2e/test_local_install_page.py runs this block verbatim -->"


@pytest.fixture(scope="module")
def shell_env(local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return operator_shell(local_cluster, tmp_path_factory)


def test_the_documented_local_install_installs_validates_and_uninstalls(
    local_cluster: LocalCluster, local_images: dict[str, ImageRef], shell_env: dict
) -> None:
    # Objects an earlier release of this session may have left; the page assumes a fresh plane.
    for resource, name in RELEASE_CLUSTER_OBJECTS:
        local_cluster.kubectl("delete", resource, name, "--ignore-not-found", check=False)
    assert shell_env["TAU_LOCAL_REGISTRY"] == local_cluster.registry
    done = subprocess.run(
        ["bash", "-euxo", "pipefail", "-c", page_block(PAGE, MARKER)],
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

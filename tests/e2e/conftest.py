"""The ``local_cluster`` session fixture: a real control plane for end-to-end tests.

Set ``TAU_E2E_KUBECONFIG`` to the admin kubeconfig of a cluster started with
``python -m hack.localcluster up`` to reuse it (fast iteration); otherwise the session builds
(cached), starts a fresh cluster in a temporary directory and stops every process at the end.
A cluster that cannot be built or started fails the tests: end-to-end tests never skip.
"""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

# The launcher is developer tooling, not part of the installed distribution, so it is imported
# from the checkout this conftest lives in.
_REPO_ROOT = Path(__file__).resolve().parents[2]
if str(_REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(_REPO_ROOT))

from images_fixture import local_images  # noqa: E402,F401  (this checkout's images, by digest)

from hack.localcluster import (  # noqa: E402
    BuildError,
    ClusterError,
    LocalCluster,
    build,
    nodeimage,
    start,
)

REUSE_ENV = "TAU_E2E_KUBECONFIG"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    reuse = os.environ.get(REUSE_ENV)
    if reuse:
        try:
            cluster = LocalCluster.from_kubeconfig(Path(reuse))
        except ClusterError as error:
            pytest.fail(f"{REUSE_ENV}={reuse}: {error}", pytrace=False)
        if not cluster.readyz():
            pytest.fail(
                f"{REUSE_ENV}={reuse}: the apiserver at {cluster.server} is not ready",
                pytrace=False,
            )
        yield cluster
        return
    try:
        cluster = start(tmp_path_factory.mktemp("localcluster"), build(), tied_to_caller=True)
    except (BuildError, ClusterError) as error:
        failure = f"the local cluster could not start: {error}"
    else:
        failure = ""
    if failure:
        pytest.fail(failure, pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def namespace(local_cluster: LocalCluster, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh namespace per test, so tests never see each other's objects."""
    stem = "".join(c if c.isalnum() else "-" for c in request.node.name[:30].lower())
    name = f"e2e-{stem.strip('-')}-{uuid.uuid4().hex[:5]}"
    local_cluster.kubectl("create", "namespace", name)
    yield name
    local_cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="session")
def python_image(local_cluster: LocalCluster) -> str:
    """A Debian image with bash and python3 (minimal stdlib), in the cluster's registry, for
    workloads on the real node (built once per machine, pushed once per session)."""
    try:
        layout = nodeimage.build_python_layout(nodeimage.cache())
    except BuildError as error:
        pytest.fail(f"the real node's python image could not be built: {error}", pytrace=False)
    return local_cluster.push_image(layout, nodeimage.python_tag(), nodeimage.PYTHON_REPOSITORY)


@pytest.fixture(scope="session")
def torchrun_image(local_cluster: LocalCluster) -> str:
    """``python_image`` plus tests/e2e/torch_standin as the ``torch`` package: the stdlib
    stand-in for ``python3 -m torch.distributed.run`` (see its docstring)."""
    try:
        base = nodeimage.build_python_layout(nodeimage.cache())
        tag = f"{nodeimage.python_tag()}-torchrun-standin"
        layout = nodeimage.insert(
            base,
            nodeimage.python_tag(),
            Path(__file__).parent / "torch_standin" / "torch",
            "/usr/local/lib/python3.11/dist-packages/torch",
            tag,
        )
    except BuildError as error:
        pytest.fail(f"the torchrun stand-in image could not be built: {error}", pytrace=False)
    try:
        return local_cluster.push_image(layout, tag, nodeimage.PYTHON_REPOSITORY)
    finally:
        shutil.rmtree(layout.parent, ignore_errors=True)

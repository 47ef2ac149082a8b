"""The ``local_images`` session fixture: this checkout's images in the local cluster's registry.

Built by the daemonless builder (hack/images; cached by content hash, so a warm session only
rebuilds the thin tau layer when the source changed) and pushed to ``local_cluster.registry``,
which the real node's containerd pulls from. Keys are the Containerfile names:

    local_images["runtime"].reference     # 127.0.0.1:PORT/tau@sha256:…  (Python, Ray, tau)
    local_images["controller"].reference  # …/tau-core-controller@sha256:…
    local_images["portal"].reference      # …/taugrid-portal@sha256:…

Use ``.reference`` (by digest) in pods and chart values: containerd caches by reference, so a
tag could run the bytes an earlier session pushed. An image that cannot be built or pushed fails
the tests that use it: end-to-end tests never skip.
"""

from __future__ import annotations

import pytest

from hack.images import Builder, BuildError, ImageRef, push
from hack.localcluster import LocalCluster


@pytest.fixture(scope="session")
def local_images(local_cluster: LocalCluster) -> dict[str, ImageRef]:
    builder = Builder()
    try:
        with builder.locked():
            refs = push(builder, builder.build(), local_cluster.registry)
    except BuildError as error:
        pytest.fail(f"this checkout's images could not be built or pushed: {error}", pytrace=False)
    return {ref.name: ref for ref in refs}

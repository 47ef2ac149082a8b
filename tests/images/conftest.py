"""The real daemonless builder (mmdebstrap, umoci, skopeo) over the shared image cache.

Builds are cached by content hash under ``${XDG_CACHE_HOME:-~/.cache}/taugrid/images``, so a
warm run takes seconds; a cold one builds the Debian base and the dependency layers once.
Missing tools fail the suite: hack/setup/05-image-tools.sh installs them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hack.images import Builder, BuildError, Built


@pytest.fixture(scope="session")
def builder() -> Builder:
    return Builder()


@pytest.fixture(scope="session")
def images(builder: Builder) -> Iterator[dict[str, Built]]:
    """Every image of docker/, built from this checkout."""
    try:
        built = builder.build()
    except BuildError as error:
        pytest.fail(f"the images could not be built: {error}", pytrace=False)
    yield {image.name: image for image in built}

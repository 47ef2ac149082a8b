"""Suite-wide scheduling: what must share one test worker when hack/test.sh runs in parallel.

The end-to-end suite starts one local cluster per worker session and the image suite writes
the shared image cache, so both run in collection order on a single worker (one xdist group);
every other suite is self-contained (temporary directories, free ports) and runs beside them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = ("e2e", "images")
_TESTS = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    shared = [_TESTS / name for name in SHARED]
    for item in items:
        if any(root in Path(item.path).parents for root in shared):
            item.add_marker(pytest.mark.xdist_group("local-cluster"))

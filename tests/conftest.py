"""Suite-wide scheduling: what must share one test worker when hack/test.sh runs in parallel.

The end-to-end suite starts one local cluster per worker session and the image suite writes
the shared image cache, so both form one work unit that runs in collection order on a single
worker; every other module is self-contained (temporary directories, free ports) and is its
own unit on whichever worker is free.

The unit is chosen by a scheduler rather than an ``xdist_group`` mark: with pytest 9.2 the
mark no longer reaches the scheduler (pytest-dev/pytest-xdist#1386) and grouping silently
stops, which here means a second local cluster competing for the same two cores.
"""

from __future__ import annotations

from typing import Any

SHARED = ("tests/e2e/", "tests/images/")
UNIT = "local-cluster"


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class SharedClusterScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(SHARED):
                return UNIT
            return super()._split_scope(nodeid)

    return SharedClusterScheduling(config, log)

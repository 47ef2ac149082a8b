"""Suite-wide scheduling: which tests share a test worker when hack/test.sh runs in parallel.

An end-to-end module needs a local cluster, which its worker's session starts once (60-90 s)
and keeps; the image suite writes the shared image cache. Those modules are split into two
cluster work units, each running in collection order on one worker with its own cluster, so
the end-to-end suite (the long pole: ~26 minutes on one cluster) takes about half that. The
real-node workload modules (Ray, the evidence sidecars, registries, serving on the real node)
form one unit and every other cluster module the other, so the two clusters are not both
running heavy real-node pods at once. Every other module is self-contained (temporary
directories, free ports) and is its own unit on whichever worker is free; with three workers
those run beside the two cluster units, on CPU the mostly waiting cluster tests leave idle.

The units are chosen by a scheduler rather than an ``xdist_group`` mark: with pytest 9.2 the
mark no longer reaches the scheduler (pytest-dev/pytest-xdist#1386) and grouping silently
stops, which here means a local cluster per module.
"""

from __future__ import annotations

import time
from typing import Any

REAL_NODE_WORKLOADS = "cluster:real-node-workloads"
CLUSTER = "cluster:platform"

# Modules whose pods do the heaviest work on the real node; a new end-to-end module joins
# the platform unit unless it is listed here. On a warm run this unit's slowest tests alone
# summed to 18 of the run's 22 minutes, so the first-run walkthrough (about 4 minutes of lighter
# pods) runs in the platform unit. The chart install onto the real node (about 4 minutes) runs
# here: in the platform unit it made that unit end 6 minutes after this one.
REAL_NODE_MODULES = (
    "tests/images/",
    "tests/e2e/test_cluster_install_real_node.py",
    "tests/e2e/test_kind_smoke.py",
    "tests/e2e/test_evidence_cluster.py",
    "tests/e2e/test_data_registry.py",
    "tests/e2e/test_serve_real_node.py",
    "tests/e2e/test_real_node_workloads.py",
    "tests/e2e/test_real_node_smoke.py",
    "tests/e2e/test_first_run_page.py",
)


def cluster_unit(nodeid: str) -> str | None:
    """The cluster work unit a test belongs to, or None for a self-contained test."""
    if nodeid.startswith(REAL_NODE_MODULES):
        return REAL_NODE_WORKLOADS
    if nodeid.startswith("tests/e2e/"):
        return CLUSTER
    return None


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class ClusterUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return cluster_unit(nodeid) or super()._split_scope(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # The cluster units are the longest: hand them out first, one per worker, so
            # neither waits behind the other on one worker.
            cluster_units = [scope for scope in self.workqueue if scope.startswith("cluster:")]
            if cluster_units:
                self.workqueue.move_to_end(cluster_units[0], last=False)
            super()._assign_work_unit(node)

    return ClusterUnitScheduling(config, log)


class UnitClock:
    """When each work unit and worker ran, printed after the run: the numbers to rebalance by.

    The suite's wall time is its slowest worker; pytest's durations list single tests, which
    does not show whether the cluster units or the self-contained tests end last.
    """

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.spans: dict[str, list[float]] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        now = time.monotonic() - self.started
        worker = getattr(getattr(report, "node", None), "gateway", None)
        names = [cluster_unit(report.nodeid) or "self-contained tests"]
        if worker is not None:
            names.append(f"worker {worker.id}")
        for name in names:
            span = self.spans.setdefault(name, [now, now])
            span[1] = now

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.spans:
            return
        terminalreporter.section("work units and workers (seconds from start)")
        for name, (first, last) in sorted(self.spans.items(), key=lambda item: item[1][1]):
            terminalreporter.write_line(f"{name}: {first:.0f}-{last:.0f}")


def pytest_configure(config: Any) -> None:
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(UnitClock(), "tau-unit-clock")

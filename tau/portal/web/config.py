"""What one Portal serves: its workspace scope, data sources and accepted Host names.

The Portal is single-workspace: every board is scoped to the namespaces named here, so the
chart can grant it namespaced Roles there and nothing cluster-wide beyond Nodes and Kueue's
cluster-scoped queue objects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tau.errors import UsageError

JOBS_SCOPE_MODES = ("disabled", "workspace", "operator")
SOURCES = ("local", "kusto")
_SCOPE = re.compile(
    r"^(?P<team>[a-z0-9]([-a-z0-9]*[a-z0-9])?)=(?P<ns>[a-z0-9-]+)/(?P<queue>[a-z0-9.-]+)$"
)


@dataclass(frozen=True)
class OperatorScope:
    """`--jobs-operator-scope team=namespace/localqueue`: one queue an operator reviewed."""

    team: str
    namespace: str
    local_queue: str

    @classmethod
    def parse(cls, text: str) -> OperatorScope:
        match = _SCOPE.match(text.strip())
        if not match:
            raise UsageError(
                f"--jobs-operator-scope {text!r} must be TEAM=NAMESPACE/LOCALQUEUE",
                owner="platform operator (portal.jobs.operatorScopes)",
            )
        return cls(match["team"], match["ns"], match["queue"])


@dataclass(frozen=True)
class PortalConfig:
    namespaces: tuple[str, ...]
    workspace: str = "default"
    cluster: str = ""
    store: Path | None = None
    jobs_scope_mode: str = "disabled"
    operator_scopes: tuple[OperatorScope, ...] = ()
    run_history_enabled: bool = False
    run_history_limit: int = 200
    source: str = "local"
    kusto_endpoint: str = ""
    kusto_database: str = "Metrics"
    run_history_table: str = "TauExpRunLifecycle"
    allowed_hosts: tuple[str, ...] = ()
    max_runs: int = 200
    # The KueueViz bundle directory when Kueue (Live) is served; None keeps it off.
    kueueviz_bundle: Path | None = None

    def __post_init__(self) -> None:
        if self.jobs_scope_mode not in JOBS_SCOPE_MODES:
            raise UsageError(
                f"--jobs-scope-mode {self.jobs_scope_mode!r} must be one of "
                f"{', '.join(JOBS_SCOPE_MODES)}",
                owner="platform operator (portal.jobs.scopeMode)",
            )
        if self.jobs_scope_mode == "operator" and not self.operator_scopes:
            raise UsageError(
                "--jobs-scope-mode operator needs at least one --jobs-operator-scope "
                "TEAM=NAMESPACE/LOCALQUEUE",
                owner="platform operator (portal.jobs.operatorScopes)",
            )
        if self.source not in SOURCES:
            raise UsageError(
                f"--source {self.source!r} must be one of {', '.join(SOURCES)}",
                owner="platform operator (portal.source)",
            )
        if self.source == "kusto" and not self.kusto_endpoint.startswith(("https://", "http://")):
            raise UsageError(
                "--source kusto needs --kusto-endpoint https://<adx>.<region>.kusto.windows.net",
                owner="platform operator (portal.kusto.endpoint)",
            )
        if self.source == "kusto" and not self.run_history_enabled:
            raise UsageError(
                "--source kusto reads the Runs board's durable history from ADX: pass "
                "--run-history-enabled (Experiments stay on the workspace store)",
                owner="platform operator (portal.runHistory.enabled)",
            )
        if self.kusto_endpoint and self.source != "kusto":
            raise UsageError(
                "--kusto-endpoint is read only with --source kusto",
                owner="platform operator (portal.source)",
            )
        if self.run_history_limit <= 0:
            raise UsageError("--run-history-limit must be > 0", owner="platform operator")
        if self.kueueviz_bundle is not None and not self.namespaces:
            raise UsageError(
                "--kueueviz shows the LocalQueues and Workloads of the workspace namespace: "
                "pass -n/--namespace",
                owner="platform operator (portal.workloadNamespace)",
            )

    @property
    def queue_namespaces(self) -> tuple[str, ...]:
        """Namespaces whose queues the Jobs/Queue board shows (none when it is disabled)."""
        if self.jobs_scope_mode == "workspace":
            return self.namespaces
        if self.jobs_scope_mode == "operator":
            return tuple(dict.fromkeys(s.namespace for s in self.operator_scopes))
        return ()

    @property
    def watched_namespaces(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.namespaces, *self.queue_namespaces)))

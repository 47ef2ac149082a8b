"""Cross-field rules of the direct run config (reference §2), checked offline.

Every rule appends a problem at the field path it is about instead of raising, so one pass
reports every independent violation of a file. Rules that need the cluster (workload
profiles, TauWorkspace defaults) belong to resolution, not here.
"""

from __future__ import annotations

from typing import Any

from tau.runconfig.models import RunConfig
from tau.runconfig.rules.base import Path, dotted, job_gpu_count, shape_gpu_count
from tau.runconfig.rules.environment import EnvironmentRules
from tau.runconfig.rules.observability import ObservabilityRules
from tau.runconfig.rules.placement import PlacementRules
from tau.runconfig.rules.storage import StorageRules
from tau.runconfig.rules.workload import WorkloadRules

__all__ = ["Checker", "check", "dotted", "job_gpu_count", "shape_gpu_count"]


class Checker(WorkloadRules, EnvironmentRules, PlacementRules, StorageRules, ObservabilityRules):
    """Runs every rule group over one validated config and its raw YAML data."""

    def run(self) -> None:
        for rule in (
            self.identity,
            self.compute,
            self.execution,
            self.launcher_configs,
            self.runtime,
            self.environment,
            self.run_block,
            self.managed_only,
            self.policy,
            self.storage,
            self.image_assets,
            self.metrics,
            self.resilience,
            self.profiler,
            self.deprecations,
        ):
            rule()


def check(
    config: RunConfig, raw: dict[str, Any]
) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """(problems, warnings) of a config that passed type validation."""
    checker = Checker(config, raw)
    checker.run()
    return checker.problems, checker.warnings

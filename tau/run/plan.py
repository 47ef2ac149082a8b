"""The one way into resolution: a loaded config, the flags and a mode become a `RunPlan`.

Where the layers come from is the mode's business, not the caller's. A cluster plan reads
the Ready TauWorkspace and a fail-closed TauCluster profile (`tau.lifecycle.submit`); a
client preview does the same in a repository this machine has connected and reads only the
offline layers (descriptor, profile snapshot, Git) elsewhere; a local plan resolves like an
offline preview under the name the local engine gives the run, and the engine starts that
resolution as it is.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from tau.resolve.direct import Resolution
from tau.resolve.layers import Overrides
from tau.runconfig import LoadedConfig
from tau.runconfig.models import RunConfig

if TYPE_CHECKING:
    from tau.lifecycle.submit import Prepared
    from tau.render.intent import RunIntent
    from tau.render.workflow import WorkflowIntent
    from tau.resolve.workflow import WorkflowResolution

Say = Callable[[str], None]


class Mode(StrEnum):
    CLUSTER = "cluster"  # submit, --dry-run=server, resume: live workspace and profile
    PREVIEW = "preview"  # --dry-run=client: live when connected, else the offline layers
    LOCAL = "local"  # this machine: offline layers, cluster-only values left unresolved


@dataclass(frozen=True)
class RunPlan:
    """A resolved run: the intent with the provenance of every value, and, for a live plan,
    the connection it was resolved against (retries and resume re-render from it)."""

    mode: Mode
    loaded: LoadedConfig
    overrides: Overrides
    resolution: Resolution | WorkflowResolution
    prepared: Prepared | None = None

    @property
    def intent(self) -> RunIntent | WorkflowIntent:
        return self.resolution.intent

    @property
    def name(self) -> str:
        return self.resolution.intent.name

    @property
    def live(self) -> bool:
        """Resolved against the cluster's TauWorkspace and profiles (not offline layers)."""
        return self.prepared is not None

    def objects(self) -> list[dict[str, object]]:
        """The rendered Kubernetes objects; a live plan lists the workload first, in the
        order they are created."""
        if self.prepared is not None:
            from tau.lifecycle.submit import render_objects

            return render_objects(self.prepared)
        from tau.render import render

        return render(self.resolution.intent)

    def connection(self) -> Prepared:
        if self.prepared is None:
            raise ValueError(f"the {self.mode} plan of {self.name} has no cluster connection")
        return self.prepared


def plan(
    loaded: LoadedConfig,
    overrides: Overrides,
    mode: Mode,
    *,
    project: str = "",
    argv: tuple[str, ...] = (),
    system_namespace: str = "tau-system",
    say: Say = lambda _: None,
) -> RunPlan:
    if mode is Mode.LOCAL:
        from tau.engine.launch import check_direct

        check_direct(loaded)
        return _local(loaded, overrides, argv)
    if mode is Mode.PREVIEW and not _connected(loaded, project, say):
        return RunPlan(mode, loaded, overrides, _offline(loaded, overrides, project, argv))
    from tau.lifecycle.submit import prepare

    prepared = prepare(
        loaded,
        overrides,
        project=project,
        argv=argv,
        system_namespace=system_namespace,
        say=say,
    )
    return RunPlan(mode, loaded, overrides, prepared.resolution, prepared)


def local_resolver(loaded: LoadedConfig, argv: tuple[str, ...]) -> Callable[[str], Resolution]:
    """What the local engine resolves a resumed run with, under the run's recorded name, once
    it has checked that the run may resume."""

    def resolve(name: str) -> Resolution:
        resolution = _local(loaded, Overrides(run_name=name), argv).resolution
        assert isinstance(resolution, Resolution)  # the engine refuses managed configs first
        return resolution

    return resolve


def _local(loaded: LoadedConfig, overrides: Overrides, argv: tuple[str, ...]) -> RunPlan:
    """The offline resolution: namespace, LocalQueue and ServiceAccount mean nothing locally,
    so the client dry-run mode (placeholders, no live reads) applies and its placeholder
    warnings, which are about the cluster, are dropped.

    A new run is resolved once, under the name the local engine gives it
    (`<config name>-<stamp>`) and claims when it starts this plan; a resume names its run.
    """
    named = overrides
    config = loaded.config
    if not overrides.run_name and isinstance(config, RunConfig) and config.run_name:
        from tau.engine import records

        base = records.check_name(config.run_name.lower())
        named = replace(overrides, run_name=records.free_name(base))
    resolution = _offline(loaded, replace(named, dry_run="client"), "", argv)
    resolution.warnings = [w for w in resolution.warnings if "placeholder" not in w]
    return RunPlan(Mode.LOCAL, loaded, overrides, resolution)


def _connected(loaded: LoadedConfig, project: str, say: Say) -> bool:
    """Whether a client preview renders with the live workspace and profile catalog.

    Not with a profile snapshot (the offline path by design), without a connection
    descriptor, or when this machine has never connected the repository (`tau workspace
    connection` records that).
    """
    from tau.connection import DescriptorNotFound, discover_connection, load_state, state_path

    policy = getattr(loaded.config, "policy", None)
    if policy is not None and policy.workload_profile_snapshot:
        return False
    try:
        source = discover_connection(loaded.base_dir, project=project)
    except DescriptorNotFound:
        return False
    if load_state(state_path(source)) is None:
        say(
            "note: this repository is not connected on this machine; rendering offline "
            "(run `tau workspace connection` to render with the live workspace and profiles)"
        )
        return False
    return True


def _offline(
    loaded: LoadedConfig, overrides: Overrides, project: str, argv: tuple[str, ...]
) -> Resolution | WorkflowResolution:
    from tau.resolve.request import resolve_request

    return resolve_request(loaded, overrides, project=project, argv=argv, env=os.environ)

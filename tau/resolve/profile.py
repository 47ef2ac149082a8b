"""The workload-profile layer: a fail-closed `tau.profiles` selection as a resolution input.

Selection itself (readiness, applicability, ambiguity) belongs to `tau.profiles`; this
module only decides which profile source a run uses and turns the selection into the
`ProfileLayer` resolution consumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.errors import ValidationError
from tau.jsontypes import JSONObject
from tau.resolve.layers import ProfileLayer
from tau.resolve.provenance import field_path
from tau.runconfig.models import Policy, RunConfig

if TYPE_CHECKING:
    from tau.profiles.select import Selection
    from tau.runconfig.loader import LoadedConfig

RESEARCHER = "researcher: tau.yaml"


def profile_layer(selection: Selection) -> ProfileLayer:
    """A `tau.profiles.select.Selection` as the profile layer."""
    profile = selection.profile
    priorities = profile.get("priorities") or {}
    return ProfileLayer(
        name=selection.name,
        origin=selection.source,
        gpus_per_worker=int(profile.get("gpusPerWorker", 0)),
        worker_count=int(profile.get("workerCount", 1)),
        placement=profile.get("placement") or "independent",
        mode=profile.get("mode") or "fixed",
        queue=profile.get("defaultLocalQueue"),
        workload_priority_class=priorities.get("workloadPriorityClassName"),
        pod_priority_class=priorities.get("podPriorityClassName"),
        disable_default_priorities=bool(priorities.get("disableDefaultPriorities")),
        cluster_generation=selection.generation,
        profile_set_hash=selection.profile_set_hash,
        topology_aware=bool(profile.get("topologies")),
        flavor_gpu_classes=_flavor_gpu_classes(profile),
    )


def _flavor_gpu_classes(profile: JSONObject) -> tuple[tuple[str, str], ...] | None:
    published = profile.get("flavorGpuClasses")
    flavors = profile.get("resourceFlavors") or []
    if published is None and flavors:
        return None
    classes = published or {}
    return tuple((str(flavor), str(classes.get(flavor, ""))) for flavor in flavors)


def snapshot_profile(loaded: LoadedConfig) -> ProfileLayer | None:
    """Offline selection from `policy.workload_profile_snapshot`, or None when unset.

    A snapshot authorises nothing by itself, so the run config must name the namespace,
    team and lane the selection is scoped to.
    """
    config = loaded.config
    assert isinstance(config, RunConfig)  # managed manifests resolve in tau.resolve.workflow
    policy = config.policy
    if policy is None or not policy.workload_profile_snapshot:
        return None
    snapshot = policy.workload_profile_snapshot
    scope = {"namespace": policy.namespace, "team": policy.team, "lane": policy.lane}
    missing = [field_path(Policy, name) for name, value in scope.items() if not value]
    if missing:
        raise ValidationError(
            f"{', '.join(missing)} is required with policy.workload_profile_snapshot so "
            "offline profile selection has explicit namespace/team/lane authorization scope",
            owner=RESEARCHER,
        )
    from tau.profiles.snapshot import load_snapshot

    profile_set = load_snapshot(loaded.base_dir / snapshot)
    selection = profile_set.select(
        policy.profile, namespace=policy.namespace, team=policy.team, lane=policy.lane
    )
    return profile_layer(selection)

"""TauCluster objects whose status the real controller code computed, for consumer tests."""

from __future__ import annotations

import copy
from typing import Any

from controller.world import kueue_world, profile

from tau.controller.conditions import condition
from tau.controller.profiles import resolve_profile_set

GENERATION = 7


def tau_cluster(*profiles: dict[str, Any], generation: int = GENERATION) -> dict[str, Any]:
    spec = {"workloadProfiles": list(profiles) or [profile()]}
    world = kueue_world(namespaces=("team-a", "team-b"))
    multikueue = condition("MultiKueueReady", False, "PrerequisitesNotReady", "", generation)
    status, ready = resolve_profile_set(spec, world, multikueue, generation, None)
    return {
        "apiVersion": "tau.azure.com/v1alpha1",
        "kind": "TauCluster",
        "metadata": {"name": "cluster", "generation": generation},
        "spec": spec,
        "status": {"workloadProfiles": status, "conditions": [ready]},
    }


def edited(obj: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(obj)

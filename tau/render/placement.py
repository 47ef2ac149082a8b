"""Where pods may land: node selectors, GPU tolerations, priorities.

`policy.gpu_class` is hardware only and maps exactly to the node label
`tau.azure.com/gpu-class`; Kueue ResourceFlavors match on that single label, so a
conflicting selector would make a workload inadmissible and is refused here.
"""

from __future__ import annotations

from tau import keys
from tau.jsontypes import JSONObject
from tau.render.errors import RenderError
from tau.render.intent import Placement

GPU_CLASS_ANY = "any"
GPU_TOLERATIONS = (
    {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    {"key": keys.NVIDIA_GPU, "operator": "Exists", "effect": "NoSchedule"},
)


def node_selector(placement: Placement, *, allow_clear: bool = True) -> dict[str, str]:
    selector: dict[str, str] = {}
    if not (allow_clear and placement.clear_node_selector):
        selector.update(placement.node_selector)
    extra = dict(placement.extra_node_selector)
    gpu_class = placement.gpu_class
    if gpu_class:
        requested = extra.get(keys.GPU_CLASS)
        if gpu_class == GPU_CLASS_ANY and requested is not None:
            raise RenderError(
                f"gpu_class {gpu_class!r} is unconstrained and cannot be combined with node "
                f"selector {keys.GPU_CLASS}={requested!r}",
                hint="remove the gpu-class key from policy.node_selector",
            )
        if gpu_class != GPU_CLASS_ANY:
            if requested is not None and requested != gpu_class:
                raise RenderError(
                    f"gpu_class {gpu_class!r} requires {keys.GPU_CLASS}={gpu_class!r}, but the "
                    f"workload node selector uses {requested!r}",
                    hint="remove the gpu-class key from policy.node_selector",
                )
            selector[keys.GPU_CLASS] = gpu_class
    selector.update(extra)
    return dict(sorted(selector.items()))


def gpu_tolerations() -> list[dict[str, str]]:
    return [dict(toleration) for toleration in GPU_TOLERATIONS]


def placement_labels(placement: Placement) -> dict[str, str | None]:
    labels: dict[str, str | None] = {
        keys.KUEUE_QUEUE_NAME: placement.queue,
        keys.KUEUE_PRIORITY_CLASS: placement.workload_priority_class,
        keys.PROFILE: placement.profile,
        keys.TEAM: placement.team,
        keys.LANE: placement.lane,
        keys.SHAPE: placement.shape,
        keys.TOPOLOGY: placement.topology,
    }
    if placement.gpu_class:
        labels[keys.GPU_CLASS] = placement.gpu_class
    return labels


def placement_annotations(placement: Placement) -> dict[str, str | None]:
    """Stamp which profile revision admitted this render (observation, not reservation)."""
    generation = placement.cluster_generation
    return {
        keys.WORKLOAD_PROFILE: placement.profile,
        keys.TAU_CLUSTER_GENERATION: str(generation) if generation is not None else None,
        keys.WORKLOAD_PROFILE_SET_HASH: placement.profile_set_hash,
        keys.POD_PRIORITY_CLASS: placement.pod_priority_class,
        keys.WORKLOAD_PRIORITY_CLASS: placement.workload_priority_class,
    }


def apply_scheduling(pod_spec: JSONObject, placement: Placement, *, gpus: int) -> None:
    if placement.pod_priority_class:
        pod_spec["priorityClassName"] = placement.pod_priority_class
    selector = node_selector(placement)
    if selector:
        pod_spec["nodeSelector"] = selector
    if gpus > 0:
        pod_spec["tolerations"] = [*pod_spec.get("tolerations", []), *gpu_tolerations()]

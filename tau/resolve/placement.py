"""Where a run is scheduled: its LocalQueue, priority classes, node selection and topology.

A selected workload profile owns placement: its queue, priorities and topology are the
platform's decision, so a run config that also names a shape, node selector or priority tier
is refused rather than merged. A GPU class narrows the profile's hardware instead: it is
accepted when a ResourceFlavor of the profile's queues carries that class (the profile's
published `flavorGpuClasses`), and rendered as the node selector Kueue matches flavors on.
Without a profile the run config's policy block decides, over the TauWorkspace defaults and
the built-in priority classes.
"""

from __future__ import annotations

from tau import keys
from tau.errors import ValidationError
from tau.render.intent import Placement
from tau.render.placement import GPU_CLASS_ANY
from tau.resolve.layers import PLACEHOLDER_QUEUE, RESEARCHER, ProfileLayer, Stack, agree
from tau.resolve.provenance import Layer, Source, field_path
from tau.runconfig.models import PLACEMENT_EQUIVALENT, Policy

PRIORITY_CLASS_BY_TIER = {"default": keys.DEFAULT_PRIORITY_CLASS, "priority": keys.PRIORITY_CLASS}

# Kueue podset topology per placement. Profiles publish the v0.5 names, run configs the
# newer ones; `unconstrained` still opts the podset into topology-aware scheduling, so it
# is only rendered when the profile reports topology-aware flavors.
PLACEMENT_TOPOLOGY = {
    "independent": (keys.KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    "elastic-workers": (keys.KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    "multi-node-nccl": (keys.KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    "single-node-nvlink": (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.HOSTNAME_LABEL),
    "unconstrained": (keys.KUEUE_PODSET_UNCONSTRAINED_TOPOLOGY, "true"),
    "same-host": (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.HOSTNAME_LABEL),
    "same-network-domain": (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.NETWORK_DOMAIN),
    "same-site": (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.SITE),
}


def _placement(value: str | None) -> str | None:
    """One spelling per placement, so `same-host` agrees with a `single-node-nvlink` profile."""
    return PLACEMENT_EQUIVALENT.get(value or "", value)


def resolve_placement(stack: Stack) -> Placement:
    policy = stack.model.policy or Policy()
    profile = stack.profile
    if profile:
        _check_profile_policy(stack, policy, profile)
        stack.record("profile", profile.name, Source(Layer.PROFILE, profile.origin))
    queue = _queue(stack, policy)
    wpc, ppc = _priorities(stack, policy)
    gpu_class = None
    if policy.gpu_class:
        gpu_class = stack.record(
            field_path(Policy, "gpu_class"), policy.gpu_class, stack.file(Policy, "gpu_class")
        )
    extra_selector = tuple(sorted((policy.node_selector or {}).items()))
    if extra_selector:
        stack.record(
            field_path(Policy, "node_selector"),
            dict(extra_selector),
            stack.file(Policy, "node_selector"),
        )
    topology: tuple[tuple[str, str], ...] = ()
    if profile and profile.topology_aware and profile.placement in PLACEMENT_TOPOLOGY:
        key, value = PLACEMENT_TOPOLOGY[profile.placement]
        topology = ((key, value),)
        stack.record("placement", profile.placement, stack.prof("placement"))
    elif policy.topology in PLACEMENT_TOPOLOGY:
        key, value = PLACEMENT_TOPOLOGY[policy.topology]
        topology = ((key, value),)
        stack.record("placement", policy.topology, stack.file(Policy, "topology"))
    for name, set_to in (("team", policy.team), ("lane", policy.lane)):
        if set_to:
            stack.record(field_path(Policy, name), set_to, stack.file(Policy, name))
    return Placement(
        queue=queue,
        team=policy.team,
        lane=policy.lane,
        shape=policy.shape,
        topology=profile.placement if profile else policy.topology,
        workload_priority_class=wpc,
        pod_priority_class=ppc,
        gpu_class=gpu_class,
        extra_node_selector=extra_selector,
        clear_node_selector=policy.clear_node_selector,
        topology_annotations=topology,
        profile=profile.name if profile else None,
        cluster_generation=profile.cluster_generation if profile else None,
        profile_set_hash=profile.profile_set_hash if profile else None,
    )


def _check_profile_policy(stack: Stack, policy: Policy, profile: ProfileLayer) -> None:
    """The profile is authoritative: a policy field naming a different placement is an
    error, and one the profile owns outright may not be set at all."""
    name = profile.name
    if policy.profile and policy.profile != name:
        raise ValidationError(
            f"{field_path(Policy, 'profile')}={policy.profile!r} conflicts with the selected "
            f"workload profile {name!r}",
            owner=RESEARCHER,
        )
    if policy.gpu_class and policy.gpu_class != GPU_CLASS_ANY:
        _check_profile_gpu_class(policy.gpu_class, profile)
    for field, value in (("shape", policy.shape), ("node_selector", policy.node_selector)):
        if value:
            raise ValidationError(
                f"{field_path(Policy, field)} cannot be combined with authoritative workload "
                f"profile {name!r}",
                hint="select a profile with the required platform placement",
                owner=RESEARCHER,
            )
    if policy.clear_node_selector:
        raise ValidationError(
            f"{field_path(Policy, 'clear_node_selector')} cannot be combined with authoritative "
            f"workload profile {name!r}",
            hint="select a profile with the required platform placement",
            owner=RESEARCHER,
        )
    if policy.priority_tier or policy.priority:
        raise ValidationError(
            f"{field_path(Policy, 'priority_tier')} cannot be combined with authoritative "
            f"priority classes from workload profile {name!r}; remove "
            f"{field_path(Policy, 'priority_tier')}",
            owner=RESEARCHER,
        )
    checks = (
        ("mode", policy.mode, profile.mode),
        ("topology", policy.topology, profile.placement),
        (
            "workload_priority_class",
            policy.workload_priority_class,
            profile.workload_priority_class,
        ),
        ("pod_priority_class", policy.pod_priority_class, profile.pod_priority_class),
    )
    for field, mine, theirs in checks:
        same = _placement(mine) == _placement(theirs) if field == "topology" else mine == theirs
        if mine and theirs and not same:
            raise ValidationError(
                f"{field_path(Policy, field)}={mine!r} conflicts with authoritative workload "
                f"profile {name!r} value {theirs!r}",
                owner=RESEARCHER,
            )


def _check_profile_gpu_class(gpu_class: str, profile: ProfileLayer) -> None:
    """The profile's queues must have a flavor of that class, or Kueue never admits the run."""
    where = f"{field_path(Policy, 'gpu_class')}={gpu_class!r}"
    flavors = profile.flavor_gpu_classes
    if flavors is None:
        raise ValidationError(
            f"{where} cannot be checked against workload profile {profile.name!r}: its status "
            "publishes no GPU class per ResourceFlavor (a tau-core controller older than this "
            "tau)",
            hint="remove policy.gpu_class, or ask the platform operator to upgrade tau-core",
            owner=RESEARCHER,
        )
    if any(served == gpu_class for _, served in flavors):
        return
    shown = ", ".join(f"{name}={served or '<no gpu class>'}" for name, served in flavors)
    raise ValidationError(
        f"{where} is not served by workload profile {profile.name!r}: none of its "
        f"ResourceFlavors carries {keys.GPU_CLASS}={gpu_class} (flavors: {shown or 'none'})",
        hint=f"choose a profile whose queue has a {gpu_class} flavor, remove policy.gpu_class, "
        f"or ask the platform operator for a ResourceFlavor labelled {keys.GPU_CLASS}="
        f"{gpu_class}",
        owner=RESEARCHER,
    )


def _queue(stack: Stack, policy: Policy) -> str:
    candidates: list[tuple[str, Source]] = []
    if policy.queue and policy.queue != "auto":
        candidates.append((policy.queue, stack.file(Policy, "queue")))
    if stack.workspace and stack.workspace.queue:
        candidates.append((stack.workspace.queue, stack.ws("LocalQueue")))
    if stack.profile and stack.profile.queue:
        candidates.append((stack.profile.queue, stack.prof("defaultLocalQueue")))
    chosen = agree("LocalQueue", candidates)
    if chosen:
        return stack.record("queue", chosen[0], chosen[1])
    return stack.unresolved(
        "queue",
        PLACEHOLDER_QUEUE,
        "set policy.queue or connect a TauWorkspace that provides a LocalQueue",
    )


def _priorities(stack: Stack, policy: Policy) -> tuple[str | None, str | None]:
    profile = stack.profile
    if profile and (profile.workload_priority_class or profile.pod_priority_class):
        wpc = stack.record(
            "workload_priority_class", profile.workload_priority_class, stack.prof("priorities")
        )
        ppc = stack.record(
            "pod_priority_class", profile.pod_priority_class, stack.prof("priorities")
        )
        return wpc, ppc
    disabled = policy.disable_default_priorities or bool(
        profile and profile.disable_default_priorities
    )
    wpc = policy.workload_priority_class
    ppc = policy.pod_priority_class
    if wpc:
        stack.record("workload_priority_class", wpc, stack.file(Policy, "workload_priority_class"))
    if ppc:
        stack.record("pod_priority_class", ppc, stack.file(Policy, "pod_priority_class"))
    if (wpc and ppc) or disabled:
        if disabled:
            source = (
                stack.file(Policy, "disable_default_priorities")
                if policy.disable_default_priorities
                else stack.prof("priorities.disableDefaultPriorities")
            )
            stack.record("default priorities", "disabled", source)
        return wpc, ppc
    tier, source = _tier(stack, policy)
    default = PRIORITY_CLASS_BY_TIER.get(tier, keys.DEFAULT_PRIORITY_CLASS)
    if not wpc:
        wpc = stack.record("workload_priority_class", default, source)
    if not ppc:
        ppc = stack.record("pod_priority_class", default, source)
    return wpc, ppc


def _tier(stack: Stack, policy: Policy) -> tuple[str, Source]:
    for field, tier in (("priority_tier", policy.priority_tier), ("priority", policy.priority)):
        if tier:
            return tier, stack.file(Policy, field)
    if stack.workspace and stack.workspace.priority_tier:
        tier = stack.workspace.priority_tier
        return ("default" if tier == "normal" else tier), stack.ws("priority tier")
    return "default", stack.default("priority tier default")

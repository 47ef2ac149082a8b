"""Policy and placement rules (reference §2.8, §3.5)."""

from __future__ import annotations

from tau import keys
from tau.runconfig.models import (
    GPU_CLASSES,
    LANES,
    POLICY_MODES,
    PRIORITY_TIERS,
    TOPOLOGIES,
    UNCONSTRAINED_PLACEMENTS,
    Policy,
)
from tau.runconfig.rules.base import (
    LABEL_VALUE,
    Base,
    one_of,
)


class PlacementRules(Base):
    def policy(self) -> None:
        policy = self.config.policy
        if policy is None:
            return
        enums = {
            "lane": LANES,
            "mode": POLICY_MODES,
            "priority": PRIORITY_TIERS,
            "priority_tier": PRIORITY_TIERS,
            "gpu_class": GPU_CLASSES,
            "topology": TOPOLOGIES,
        }
        for name, values in enums.items():
            value = getattr(policy, name)
            if value is not None and value not in values:
                self.add(
                    ("policy", name),
                    f'policy.{name} must be one of: {one_of(values)} (got "{value}")',
                )
        if policy.priority and policy.priority_tier and policy.priority != policy.priority_tier:
            self.add(
                ("policy", "priority"),
                "policy.priority is an alias of policy.priority_tier and conflicts with it; "
                "set only priority_tier",
            )
        tier = policy.priority_tier or policy.priority
        if tier and (
            policy.workload_priority_class
            or policy.pod_priority_class
            or policy.disable_default_priorities
        ):
            self.add(
                ("policy", "priority_tier" if policy.priority_tier else "priority"),
                "policy.priority_tier cannot be combined with policy.workload_priority_class, "
                "policy.pod_priority_class or policy.disable_default_priorities",
            )
        if policy.team is not None and (
            len(policy.team) > 63 or not LABEL_VALUE.match(policy.team)
        ):
            self.add(
                ("policy", "team"),
                f'policy.team "{policy.team}" must be a valid Kubernetes label value '
                "(<= 63 chars: letters, digits, '-', '_', '.')",
            )
        if policy.clear_node_selector:
            if self.managed:
                pass  # reported by managed_only
            elif self.engine != "job":
                self.add(
                    ("policy", "clear_node_selector"),
                    "policy.clear_node_selector requires engine: job; RayJobs cannot clear "
                    "profile/topology node selectors",
                )
        if policy.workload_profile_snapshot:
            for name in ("namespace", "team", "lane"):
                if not getattr(policy, name):
                    self.add(
                        ("policy", name),
                        f"policy.{name} is required with policy.workload_profile_snapshot so "
                        "offline profile selection has explicit namespace/team/lane "
                        "authorization scope",
                    )
        self.placement(policy)

    def placement(self, policy: Policy) -> None:
        selector = (policy.node_selector or {}).get(keys.GPU_CLASS)
        gpu_class = policy.gpu_class
        if gpu_class in GPU_CLASSES and selector is not None:
            if gpu_class == "any":
                self.add(
                    ("policy", "node_selector", keys.GPU_CLASS),
                    f'gpu_class "any" is unconstrained and cannot be combined with node selector '
                    f'{keys.GPU_CLASS}="{selector}"',
                )
            elif selector != gpu_class:
                self.add(
                    ("policy", "node_selector", keys.GPU_CLASS),
                    f'gpu_class "{gpu_class}" requires {keys.GPU_CLASS}="{gpu_class}", '
                    f'but the workload node selector uses "{selector}"',
                )
        lane, mode = policy.lane, policy.mode
        if mode == "elastic" and lane is not None and lane != "elastic":
            self.add(("policy", "mode"), "policy.mode elastic requires policy.lane elastic")
        if lane == "elastic" and mode == "fixed":
            self.add(("policy", "lane"), "policy.lane elastic requires policy.mode elastic")
        elastic = mode == "elastic" or lane == "elastic"
        if elastic and policy.topology not in (None, *UNCONSTRAINED_PLACEMENTS):
            self.add(
                ("policy", "topology"),
                f'policy.topology "{policy.topology}" cannot be used with elastic mode; elastic '
                "runs need independent or elastic-workers placement",
            )
        if gpu_class == "h200-141gb" and (
            (lane is not None and lane != "large-memory") or mode == "elastic"
        ):
            self.add(
                ("policy", "gpu_class"),
                "policy.gpu_class h200-141gb is only available to lane large-memory",
            )
        if (policy.priority_tier or policy.priority) == "priority" and lane == "elastic":
            self.add(
                ("policy", "priority_tier" if policy.priority_tier else "priority"),
                "policy.priority_tier priority is not allowed for lane elastic",
            )

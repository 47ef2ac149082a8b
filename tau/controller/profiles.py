"""Resolve declared workload profiles against live Kueue and scheduling objects (read-only).

Each profile gets one condition per dependency stage and a Ready condition; the resolved
identities (LocalQueues, ClusterQueues, flavors, topologies, priority classes) are published
in status together with the profileSetHash that `tau` recomputes before trusting them.
`World` is the read interface (`get` returns None for a missing object; `list`), so unit
tests resolve profiles against plain dictionaries.
"""

from __future__ import annotations

from typing import Any, Protocol

from tau import keys
from tau.controller import kubeapi as k
from tau.controller.conditions import condition, find, merge_conditions
from tau.kube.errors import KubeError, NotFoundError
from tau.kube.resources import Resource
from tau.profiles.normalize import normal_name, normalize, profile_set_hash, validation_problems


class World(Protocol):
    def get(self, resource: Resource, name: str, namespace: str = "") -> dict[str, Any] | None: ...

    def list(self, resource: Resource) -> list[dict[str, Any]]: ...


DEPENDENCY_STAGES = (
    keys.COND_LOCAL_QUEUES_RESOLVED,
    keys.COND_CLUSTER_QUEUES_READY,
    keys.COND_EXECUTION_READY,
    keys.COND_RESOURCE_FLAVORS_READY,
    keys.COND_TOPOLOGIES_READY,
    keys.COND_PRIORITY_CLASSES_READY,
)
STAGE_REASONS = {
    keys.COND_LOCAL_QUEUES_RESOLVED: ("LocalQueuesResolved", "LocalQueuesNotResolved"),
    keys.COND_CLUSTER_QUEUES_READY: ("ClusterQueuesReady", "ClusterQueuesNotReady"),
    keys.COND_RESOURCE_FLAVORS_READY: ("ResourceFlavorsReady", "ResourceFlavorsNotReady"),
    keys.COND_TOPOLOGIES_READY: ("TopologiesReady", "TopologiesNotReady"),
    keys.COND_PRIORITY_CLASSES_READY: ("PriorityClassesReady", "PriorityClassesNotReady"),
}
ADMISSION_CHECKS_NOT_READY = "AdmissionChecksNotReady"
UNEXPECTED_MULTIKUEUE_CHECK = "UnexpectedMultiKueueAdmissionCheck"
MULTIKUEUE_WIRING_NOT_READY = "MultiKueueWiringNotReady"
PREREQUISITES_NOT_READY = "PrerequisitesNotReady"


def is_active(obj: dict[str, Any]) -> tuple[bool, str]:
    cond = find((obj.get("status") or {}).get("conditions"), "Active")
    if cond is None:
        return False, "has no Active condition"
    if cond.get("status") != "True":
        return False, f"is not Active ({cond.get('reason', '')}: {cond.get('message', '')})"
    return True, ""


def _issues(items: list[str]) -> str:
    return "; ".join(sorted(set(items)))


# --- MultiKueue capability ----------------------------------------------------------------


def multikueue_condition(world: World, generation: int) -> dict[str, Any]:
    """MultiKueueReady: an active MultiKueue AdmissionCheck, its config, and an active worker."""

    def not_ready(message: str) -> dict[str, Any]:
        return condition(
            keys.COND_MULTIKUEUE_READY, False, PREREQUISITES_NOT_READY, message, generation
        )

    try:
        checks = world.list(k.ADMISSION_CHECKS)
    except NotFoundError as error:
        return not_ready(f"AdmissionCheck API is not served: {error.message}")
    mine = sorted(
        (
            c
            for c in checks
            if (c.get("spec") or {}).get("controllerName") == keys.MULTIKUEUE_CONTROLLER
        ),
        key=lambda c: c["metadata"]["name"],
    )
    if not mine:
        return not_ready(f"no AdmissionCheck uses controller {keys.MULTIKUEUE_CONTROLLER}")
    issues = []
    for check in mine:
        name = check["metadata"]["name"]
        active, why = is_active(check)
        if not active:
            issues.append(f"AdmissionCheck {name} {why}")
            continue
        params = (check.get("spec") or {}).get("parameters") or {}
        if (
            params.get("apiGroup") != keys.KUEUE_GROUP
            or params.get("kind") != "MultiKueueConfig"
            or not params.get("name")
        ):
            issues.append(f"AdmissionCheck {name} does not reference a MultiKueueConfig")
            continue
        try:
            config = world.get(k.MULTIKUEUE_CONFIGS, params["name"])
        except NotFoundError:
            config = None
        if config is None:
            issues.append(f"MultiKueueConfig {params['name']} of AdmissionCheck {name} not found")
            continue
        clusters = (config.get("spec") or {}).get("clusters") or []
        if not clusters:
            issues.append(f"MultiKueueConfig {params['name']} lists no clusters")
            continue
        workers = []
        for cluster in clusters:
            obj = world.get(k.MULTIKUEUE_CLUSTERS, cluster)
            if obj is not None and is_active(obj)[0]:
                workers.append(cluster)
        if not workers:
            issues.append(f"MultiKueueConfig {params['name']} has no Active workers")
            continue
        return condition(
            keys.COND_MULTIKUEUE_READY,
            True,
            "Ready",
            f"AdmissionCheck {name} → MultiKueueConfig {params['name']} → active {workers[0]}",
            generation,
        )
    return not_ready(_issues(issues))


# --- execution readiness ------------------------------------------------------------------


def admission_check_names(cluster_queue: dict[str, Any]) -> tuple[list[str], str]:
    """Check names from `spec.admissionChecks` or the v1beta2 strategy, or a malformation."""
    spec = cluster_queue.get("spec") or {}
    legacy = spec.get("admissionChecks")
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks")
    name = cluster_queue["metadata"]["name"]
    if legacy and strategy:
        return [], f"ClusterQueue {name} sets both admissionChecks and admissionChecksStrategy"
    names = legacy if legacy else [(item or {}).get("name") for item in strategy or []]
    if any(not isinstance(n, str) or not n for n in names) or len(set(names)) != len(names):
        return [], f"ClusterQueue {name} has malformed admission check names"
    return sorted(names), ""


def execution_condition(
    profile: dict[str, Any],
    cluster_queues: dict[str, dict[str, Any]],
    world: World,
    multikueue: dict[str, Any],
    generation: int,
) -> dict[str, Any]:
    def cond(status: bool, reason: str, message: str) -> dict[str, Any]:
        return condition(keys.COND_EXECUTION_READY, status, reason, message, generation)

    issues: list[str] = []
    per_queue: dict[str, list[str]] = {}
    controllers: dict[str, str] = {}
    for cq_name, cq in sorted(cluster_queues.items()):
        names, problem = admission_check_names(cq)
        if problem:
            issues.append(problem)
        per_queue[cq_name] = names
        for check_name in names:
            if check_name in controllers:
                continue
            try:
                check = world.get(k.ADMISSION_CHECKS, check_name)
            except KubeError as error:
                issues.append(f"AdmissionCheck {check_name} is unreadable: {error.message}")
                continue
            if check is None:
                issues.append(f"AdmissionCheck {check_name} not found")
                continue
            controller = (check.get("spec") or {}).get("controllerName")
            if not isinstance(controller, str) or not controller:
                issues.append(f"AdmissionCheck {check_name} has a malformed spec.controllerName")
                continue
            controllers[check_name] = controller
            if controller == keys.MULTIKUEUE_CONTROLLER and not is_active(check)[0]:
                issues.append(f"MultiKueue AdmissionCheck {check_name} {is_active(check)[1]}")
    if profile.get("executionTarget") != "multiKueue":
        unexpected = sorted(n for n, c in controllers.items() if c == keys.MULTIKUEUE_CONTROLLER)
        if unexpected:
            return cond(
                False,
                UNEXPECTED_MULTIKUEUE_CHECK,
                f"singleCluster profile reaches MultiKueue AdmissionCheck {', '.join(unexpected)}",
            )
        if issues:
            return cond(False, ADMISSION_CHECKS_NOT_READY, _issues(issues))
        return cond(True, "Ready", "runs on this cluster")
    if multikueue.get("status") != "True" or multikueue.get("observedGeneration") != generation:
        reason = multikueue.get("reason") or PREREQUISITES_NOT_READY
        if multikueue.get("status") == "True":
            reason = PREREQUISITES_NOT_READY
        return cond(
            False,
            reason,
            f"MultiKueueReady is not current and True: {multikueue.get('message', '')}",
        )
    if issues:
        return cond(False, ADMISSION_CHECKS_NOT_READY, _issues(issues))
    wiring = []
    for cq_name, names in sorted(per_queue.items()):
        if not names:
            wiring.append(f"ClusterQueue {cq_name} has no admission checks")
        elif any(controllers.get(n) != keys.MULTIKUEUE_CONTROLLER for n in names):
            wiring.append(f"ClusterQueue {cq_name} mixes non-MultiKueue admission checks")
    if wiring:
        return cond(False, MULTIKUEUE_WIRING_NOT_READY, _issues(wiring))
    return cond(True, "Ready", "dispatches through MultiKueue")


# --- per-profile resolution ---------------------------------------------------------------


# Who fixes a failing stage, and how: the first failing stage that is not merely waiting for
# an earlier one is the cause a reader acts on.
STAGE_OWNERS = {
    keys.COND_LOCAL_QUEUES_RESOLVED: (
        "platform operator",
        "create the TauWorkspace for the namespace first (it creates the LocalQueue)",
    ),
    keys.COND_CLUSTER_QUEUES_READY: (
        "platform/queue owner",
        "create or restart the ClusterQueue (a stopped queue admits nothing)",
    ),
    keys.COND_EXECUTION_READY: ("platform/queue owner", "fix the ClusterQueue's admission checks"),
    keys.COND_RESOURCE_FLAVORS_READY: ("platform/queue owner", "create the ResourceFlavors"),
    keys.COND_TOPOLOGIES_READY: ("platform/queue owner", "create the Topology"),
    keys.COND_PRIORITY_CLASSES_READY: (
        "platform operator",
        "create the priority classes (the chart's baselineQueue.priorityClasses)",
    ),
}


def root_cause(conditions: list[dict[str, Any]]) -> str:
    """`cause: <first real failure> (owner: <role>: <action>)` of a not-ready profile."""
    for cond in conditions:
        if cond.get("status") == "True" or str(cond.get("message", "")).startswith("waiting for"):
            continue
        owner, action = STAGE_OWNERS.get(cond.get("type", ""), ("platform operator", ""))
        return f"cause: {cond.get('message', '')} (owner: {owner}: {action})".replace(": )", ")")
    return "cause: unknown (owner: platform operator)"


def _stage(type_: str, issues: list[str], ok_message: str, generation: int) -> dict[str, Any]:
    good, bad = STAGE_REASONS[type_]
    if issues:
        return condition(type_, False, bad, _issues(issues), generation)
    return condition(type_, True, good, ok_message, generation)


def _blocked(type_: str, by: str, generation: int) -> dict[str, Any]:
    reason = STAGE_REASONS.get(type_, ("", ADMISSION_CHECKS_NOT_READY))[1]
    return condition(type_, False, reason, f"waiting for {by}", generation)


def resolve_profile(
    declared: dict[str, Any],
    spec: dict[str, Any],
    world: World,
    multikueue: dict[str, Any],
    generation: int,
) -> dict[str, Any]:
    """The status record of one profile: normalized intent, identities and conditions."""
    intent = normalize(declared)
    record: dict[str, Any] = dict(intent)
    problems = validation_problems(declared)
    if problems:
        conditions = [
            condition(t, "Unknown", "ValidationSkipped", "profile is invalid", generation)
            for t in DEPENDENCY_STAGES
        ]
        conditions.append(
            condition(
                keys.COND_READY, False, "InvalidWorkloadProfile", _issues(problems), generation
            )
        )
        record["conditions"] = conditions
        return record

    queue = intent["defaultLocalQueue"]
    namespaces = list((intent.get("applicability") or {}).get("namespaces") or [])
    if not namespaces:
        shared = ((spec.get("queues") or {}).get("sharedLocalQueues")) or []
        namespaces = sorted(
            {normal_name(s["namespace"]) for s in shared if normal_name(s["name"]) == queue}
        )
    conditions = []

    # LocalQueues.
    issues, local_queues = [], []
    if not namespaces:
        issues.append(
            "global namespace applicability but no sharedLocalQueues entry names"
            f" LocalQueue {queue}"
        )
    for ns in namespaces:
        lq = world.get(k.LOCAL_QUEUES, queue, ns)
        if lq is None:
            issues.append(f"LocalQueue {ns}/{queue} not found")
            continue
        cq = (lq.get("spec") or {}).get("clusterQueue") or ""
        if not cq:
            issues.append(f"LocalQueue {ns}/{queue} has no spec.clusterQueue")
            continue
        local_queues.append({"namespace": ns, "name": queue, "clusterQueue": cq})
    record["localQueues"] = local_queues
    lq_cond = _stage(
        keys.COND_LOCAL_QUEUES_RESOLVED, issues, f"{len(local_queues)} LocalQueue(s)", generation
    )
    conditions.append(lq_cond)

    # ClusterQueues.
    cq_names = sorted({lq["clusterQueue"] for lq in local_queues})
    record["clusterQueues"] = cq_names
    cluster_queues: dict[str, dict[str, Any]] = {}
    flavors: set[str] = set()
    if lq_cond["status"] != "True":
        cq_cond = _blocked(
            keys.COND_CLUSTER_QUEUES_READY, keys.COND_LOCAL_QUEUES_RESOLVED, generation
        )
    else:
        issues = []
        for name in cq_names:
            cq = world.get(k.CLUSTER_QUEUES, name)
            if cq is None:
                issues.append(f"ClusterQueue {name} not found")
                continue
            cluster_queues[name] = cq
            active, why = is_active(cq)
            if not active:
                issues.append(f"ClusterQueue {name} {why}")
            for group in (cq.get("spec") or {}).get("resourceGroups") or []:
                flavors.update(f["name"] for f in group.get("flavors") or [] if f.get("name"))
        cq_cond = _stage(keys.COND_CLUSTER_QUEUES_READY, issues, "all Active", generation)
    conditions.append(cq_cond)

    # Execution.
    if cq_cond["status"] != "True":
        conditions.append(
            condition(
                keys.COND_EXECUTION_READY,
                False,
                ADMISSION_CHECKS_NOT_READY,
                f"waiting for {keys.COND_CLUSTER_QUEUES_READY}",
                generation,
            )
        )
    else:
        conditions.append(
            execution_condition(intent, cluster_queues, world, multikueue, generation)
        )

    # ResourceFlavors and Topologies.
    record["resourceFlavors"] = sorted(flavors)
    gpu_classes: dict[str, str] = {}
    topologies: set[str] = set()
    if cq_cond["status"] != "True":
        rf_cond = _blocked(
            keys.COND_RESOURCE_FLAVORS_READY, keys.COND_CLUSTER_QUEUES_READY, generation
        )
    else:
        issues = []
        for name in sorted(flavors):
            rf = world.get(k.RESOURCE_FLAVORS, name)
            if rf is None:
                issues.append(f"ResourceFlavor {name} not found")
                continue
            topology = (rf.get("spec") or {}).get("topologyName")
            if topology:
                topologies.add(topology)
            gpu_class = ((rf.get("spec") or {}).get("nodeLabels") or {}).get(keys.GPU_CLASS)
            if gpu_class:
                gpu_classes[name] = str(gpu_class)
        rf_cond = _stage(
            keys.COND_RESOURCE_FLAVORS_READY, issues, f"{len(flavors)} flavor(s)", generation
        )
    conditions.append(rf_cond)
    record["flavorGpuClasses"] = gpu_classes
    record["topologies"] = sorted(topologies)
    if rf_cond["status"] != "True":
        conditions.append(
            _blocked(keys.COND_TOPOLOGIES_READY, keys.COND_RESOURCE_FLAVORS_READY, generation)
        )
    else:
        issues = [
            f"Topology {t} not found"
            for t in sorted(topologies)
            if world.get(k.TOPOLOGIES, t) is None
        ]
        conditions.append(
            _stage(
                keys.COND_TOPOLOGIES_READY, issues, f"{len(topologies)} topology(ies)", generation
            )
        )

    # Priority classes.
    issues = []
    priorities = intent.get("priorities") or {}
    if priorities.get("disableDefaultPriorities"):
        message = "default priorities disabled"
    else:
        wpc = priorities.get("workloadPriorityClassName", "")
        pc = priorities.get("podPriorityClassName", "")
        record["workloadPriorityClasses"] = [wpc]
        record["podPriorityClasses"] = [pc]
        if world.get(k.WORKLOAD_PRIORITY_CLASSES, wpc) is None:
            issues.append(f"WorkloadPriorityClass {wpc} not found")
        if world.get(k.PRIORITY_CLASSES, pc) is None:
            issues.append(f"PriorityClass {pc} not found")
        message = f"WorkloadPriorityClass {wpc} and PriorityClass {pc} exist"
    conditions.append(_stage(keys.COND_PRIORITY_CLASSES_READY, issues, message, generation))

    not_ready = [c["type"] for c in conditions if c["status"] != "True"]
    if not_ready:
        ready = condition(
            keys.COND_READY,
            False,
            "WorkloadProfileNotReady",
            f"not ready: {', '.join(not_ready)}; {root_cause(conditions)}",
            generation,
        )
    else:
        ready = condition(keys.COND_READY, True, "WorkloadProfileReady", "", generation)
    record["conditions"] = [*conditions, ready]
    return {key: value for key, value in record.items() if value not in ([], None)}


def resolve_profile_set(
    spec: dict[str, Any],
    world: World,
    multikueue: dict[str, Any],
    generation: int,
    previous: dict[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`status.workloadProfiles` and the WorkloadProfilesReady condition."""
    declared = spec.get("workloadProfiles") or []
    before = {p.get("name"): p for p in (previous or {}).get("profiles") or []}
    records = []
    for item in declared:
        record = resolve_profile(item, spec, world, multikueue, generation)
        old = before.get(record.get("name"), {})
        record["conditions"] = merge_conditions(old.get("conditions"), record["conditions"])
        records.append(record)
    records.sort(key=lambda r: r.get("name", ""))
    ready = sum(
        1 for r in records if (find(r["conditions"], keys.COND_READY) or {}).get("status") == "True"
    )
    status: dict[str, Any] = {
        "observedGeneration": generation,
        "observed": len(declared),
        "ready": ready,
        "drifted": len(declared) - ready,
        "profiles": records,
    }
    try:
        status["profileSetHash"] = profile_set_hash(records)
    except ValueError:
        status["profileSetHash"] = ""
    if not declared:
        cond = condition(
            keys.COND_WORKLOAD_PROFILES_READY, True, "NoWorkloadProfiles", "", generation
        )
    elif ready == len(declared):
        cond = condition(
            keys.COND_WORKLOAD_PROFILES_READY,
            True,
            "WorkloadProfilesReady",
            f"{ready} of {len(declared)} workload profiles ready",
            generation,
        )
    else:
        causes: dict[str, list[str]] = {}
        for record in records:
            cond = find(record["conditions"], keys.COND_READY) or {}
            if cond.get("status") != "True":
                why = str(cond.get("message") or "").partition("; cause: ")[2] or str(
                    cond.get("message") or cond.get("reason") or "unknown"
                )
                causes.setdefault(why, []).append(str(record.get("name", "")))
        grouped = "; ".join(
            f"{', '.join(names[:3])}{f' and {len(names) - 3} more' if len(names) > 3 else ''}: "
            f"{why}"
            for why, names in causes.items()
        )
        cond = condition(
            keys.COND_WORKLOAD_PROFILES_READY,
            False,
            "WorkloadProfilesNotReady",
            f"{len(declared) - ready} of {len(declared)} workload profiles not ready — {grouped}",
            generation,
        )
    return status, cond

"""`tau cluster validate installation`: the eight ordered control-plane checks.

`observe()` reads the cluster once into an `Observation` (raw objects or the error met);
`evaluate()` is a pure function from that observation to PASS/FAIL/SKIP results, so the rules
are tested on recorded objects and the CLI polls by repeating both. An operator's `--suite`
adds its testinfra checks, run inside the controller's container (`controller_container`),
as further lines of the same report (`suite_results`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tau import keys
from tau.cluster import suites
from tau.kube import KubeClient, KubeError
from tau.kube.resources import (
    CLUSTER_QUEUES,
    DEPLOYMENTS,
    PODS,
    TAU_CLUSTERS,
    VALIDATING_ADMISSION_POLICIES,
    VALIDATING_ADMISSION_POLICY_BINDINGS,
)

QUOTA_GUARD = "tau-quota-approval-guard"
CONTROLLER_DEPLOYMENT = "tau-core-controller"
MIN_KUBERNETES = (1, 30)

CHECKS = (
    "Kubernetes",
    "Kueue",
    "KubeRay",
    "Portal",
    "Tau controller",
    "TauCluster",
    "Baseline queue",
    "Quota guard",
)

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str
    detail: str = ""


@dataclass
class Report:
    results: list[CheckResult]

    @property
    def passed(self) -> int:
        return sum(r.status == PASS for r in self.results)

    @property
    def required(self) -> int:
        return sum(r.status != SKIP for r in self.results)

    @property
    def ready(self) -> bool:
        return self.required > 0 and self.passed == self.required

    def lines(self) -> list[str]:
        out = [f"  {r.status:<4}  {r.name:<20} {r.detail}".rstrip() for r in self.results]
        verdict = "READY" if self.ready else "NOT READY"
        out.append(f"{verdict}: {self.passed}/{self.required} checks passed")
        return out

    def as_data(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "passed": self.passed,
            "required": self.required,
            "checks": [
                {"name": r.name, "status": r.status, "detail": r.detail} for r in self.results
            ],
        }


def disabled_components(values: dict[str, Any] | None) -> set[str]:
    """Components whose switch is literally boolean false in the release values.

    Only a real `false` disables: a string "false" or 0 would not disable the sub-chart in
    Helm either, so it must not hide a failing check.
    """
    if not values:
        return set()
    components = values.get("components") or {}
    disabled = set()
    for key in ("kueue", "kuberayOperator", "tauCoreController"):
        switch = components.get(key) or {}
        if isinstance(switch, dict) and switch.get("enabled") is False:
            disabled.add(key)
    if (values.get("baselineQueue") or {}).get("enabled") is False:
        disabled.add("baselineQueue")
    core = (components.get("taugridCore") or {}).get("enabled")
    portal = ((values.get("taugrid-core") or {}).get("portal") or {}).get("enabled")
    if core is False or portal is False:
        disabled.add("portal")
    return disabled


@dataclass
class Observation:
    """What one pass read; each field holds the object(s) or the error met reading it."""

    version: dict[str, Any] | KubeError | None = None
    deployments: list[dict[str, Any]] | KubeError = field(default_factory=list)
    controller: dict[str, Any] | KubeError | None = None
    tau_cluster: dict[str, Any] | KubeError | None = None
    cluster_queues: list[dict[str, Any]] | KubeError = field(default_factory=list)
    policy: dict[str, Any] | KubeError | None = None
    binding: dict[str, Any] | KubeError | None = None


def _attempt(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except KubeError as error:
        return error


def observe(client: KubeClient, release: str, namespace: str) -> Observation:
    selector = f"{keys.APP_INSTANCE}={release}"
    return Observation(
        version=_attempt(lambda: client.request("GET", "/version", what="read the server version")),
        deployments=_attempt(lambda: client.list(DEPLOYMENTS, namespace, label_selector=selector)),
        controller=_attempt(
            lambda: client.get_or_none(DEPLOYMENTS, CONTROLLER_DEPLOYMENT, namespace)
        ),
        tau_cluster=_attempt(lambda: client.get_or_none(TAU_CLUSTERS, "cluster")),
        cluster_queues=_attempt(
            lambda: client.list(
                CLUSTER_QUEUES,
                label_selector=f"{selector},{keys.APP_PART_OF}={keys.APP_PART_OF_VALUE}",
            )
        ),
        policy=_attempt(lambda: client.get_or_none(VALIDATING_ADMISSION_POLICIES, QUOTA_GUARD)),
        binding=_attempt(
            lambda: client.get_or_none(VALIDATING_ADMISSION_POLICY_BINDINGS, QUOTA_GUARD)
        ),
    )


def _leading_int(text: Any) -> int | None:
    digits = ""
    for char in str(text or ""):
        if not char.isdigit():
            break
        digits += char
    return int(digits) if digits else None


def check_kubernetes(version: dict[str, Any] | KubeError | None) -> CheckResult:
    if isinstance(version, KubeError) or not version:
        return CheckResult("Kubernetes", FAIL, f"cannot read the server version: {version}")
    major, minor = _leading_int(version.get("major")), _leading_int(version.get("minor"))
    shown = version.get("gitVersion") or f"{version.get('major')}.{version.get('minor')}"
    if major is None or minor is None:
        return CheckResult("Kubernetes", FAIL, f"unparseable server version {shown}")
    if (major, minor) < MIN_KUBERNETES:
        return CheckResult("Kubernetes", FAIL, f"{shown} is older than 1.30")
    return CheckResult("Kubernetes", PASS, f"{shown}")


def deployment_ready(dep: dict[str, Any]) -> tuple[bool, str]:
    spec, status = dep.get("spec") or {}, dep.get("status") or {}
    desired = spec.get("replicas", 1)
    name = dep.get("metadata", {}).get("name", "?")
    if desired < 1:
        return False, f"{name} is scaled to 0"
    generation = dep.get("metadata", {}).get("generation", 0)
    if status.get("observedGeneration", 0) < generation:
        return False, f"{name} rollout not observed yet"
    counts = [status.get(k, 0) for k in ("readyReplicas", "availableReplicas", "updatedReplicas")]
    if all(c == desired for c in counts):
        return True, f"{name} {desired}/{desired} ready"
    return False, f"{name} {counts[0]}/{desired} ready"


def _one_deployment(
    name: str,
    deployments: list[dict[str, Any]] | KubeError,
    match: Callable[[dict[str, Any]], bool],
) -> CheckResult:
    if isinstance(deployments, KubeError):
        return CheckResult(name, FAIL, f"cannot list deployments: {deployments}")
    found = [d for d in deployments if match(d)]
    if len(found) != 1:
        return CheckResult(
            name, FAIL, f"expected exactly one release deployment, found {len(found)}"
        )
    ok, detail = deployment_ready(found[0])
    return CheckResult(name, PASS if ok else FAIL, detail)


def _chart_prefix(prefix: str) -> Callable[[dict[str, Any]], bool]:
    def match(dep: dict[str, Any]) -> bool:
        labels = dep.get("metadata", {}).get("labels") or {}
        return str(labels.get(keys.HELM_CHART_LABEL, "")).startswith(prefix)

    return match


def _portal(dep: dict[str, Any]) -> bool:
    labels = dep.get("metadata", {}).get("labels") or {}
    return labels.get(keys.APP_COMPONENT) == keys.PORTAL_COMPONENT


def _conditions(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or []}


def check_tau_cluster(obj: dict[str, Any] | KubeError | None) -> CheckResult:
    name = "TauCluster"
    if isinstance(obj, KubeError):
        return CheckResult(name, FAIL, f"cannot read {TAU_CLUSTERS.display}/cluster: {obj}")
    if obj is None:
        return CheckResult(name, FAIL, f"{TAU_CLUSTERS.display}/cluster not found")
    generation = obj.get("metadata", {}).get("generation", 0)
    status = obj.get("status") or {}
    if status.get("observedGeneration", 0) < generation:
        return CheckResult(
            name, FAIL, f"generation {generation} not observed by the controller yet"
        )
    if status.get("phase") == "Degraded":
        return CheckResult(name, FAIL, "phase Degraded")
    nodes = _conditions(obj).get(keys.COND_NODES_READY)
    if nodes is None:
        return CheckResult(name, FAIL, "condition NodesReady missing")
    if nodes.get("observedGeneration", generation) < generation:
        return CheckResult(name, FAIL, "condition NodesReady is stale")
    if nodes.get("status") != "True":
        return CheckResult(
            name, FAIL, f"NodesReady={nodes.get('status')} ({nodes.get('reason', '')})"
        )
    return CheckResult(
        name, PASS, f"NodesReady ({nodes.get('reason', '')}), phase {status.get('phase', '')}"
    )


def check_baseline_queue(queues: list[dict[str, Any]] | KubeError) -> CheckResult:
    name = "Baseline queue"
    if isinstance(queues, KubeError):
        return CheckResult(name, FAIL, f"cannot list ClusterQueues: {queues}")
    if len(queues) != 1:
        return CheckResult(
            name, FAIL, f"expected exactly one release ClusterQueue, found {len(queues)}"
        )
    queue = queues[0]
    queue_name = queue.get("metadata", {}).get("name", "?")
    active = _conditions(queue).get(keys.COND_ACTIVE)
    if not active or active.get("status") != "True":
        reason = active.get("reason", "") if active else "no Active condition"
        return CheckResult(name, FAIL, f"ClusterQueue {queue_name} not active ({reason})")
    return CheckResult(name, PASS, f"ClusterQueue {queue_name} active")


def check_quota_guard(
    policy: dict[str, Any] | KubeError | None, binding: dict[str, Any] | KubeError | None
) -> CheckResult:
    name = "Quota guard"
    for obj, what in ((policy, "ValidatingAdmissionPolicy"), (binding, "binding")):
        if isinstance(obj, KubeError):
            return CheckResult(name, FAIL, f"cannot read the {what}: {obj}")
        if obj is None:
            return CheckResult(name, FAIL, f"{what} {QUOTA_GUARD} not found")
    assert isinstance(policy, dict) and isinstance(binding, dict)
    spec = policy.get("spec") or {}
    if spec.get("failurePolicy") != "Fail":
        return CheckResult(name, FAIL, "failurePolicy is not Fail")
    rules = (spec.get("matchConstraints") or {}).get("resourceRules") or []
    want = {
        "apiGroups": {"tau.azure.com"},
        "apiVersions": {"v1alpha1"},
        "operations": {"CREATE", "UPDATE"},
        "resources": {"quotarequests"},
    }
    if len(rules) != 1 or any(set(rules[0].get(k) or []) != v for k, v in want.items()):
        return CheckResult(name, FAIL, "policy must match exactly CREATE/UPDATE of quotarequests")
    bspec = binding.get("spec") or {}
    if bspec.get("policyName") != QUOTA_GUARD or "Deny" not in (
        bspec.get("validationActions") or []
    ):
        return CheckResult(name, FAIL, "binding does not Deny with the guard policy")
    return CheckResult(name, PASS, f"{QUOTA_GUARD} denies unauthorized decisions")


def evaluate(observed: Observation, disabled: set[str]) -> Report:
    def skip(name: str, component: str) -> CheckResult:
        return CheckResult(name, SKIP, f"{component} disabled in release values")

    results = [check_kubernetes(observed.version)]
    results.append(
        skip("Kueue", "components.kueue")
        if "kueue" in disabled
        else _one_deployment("Kueue", observed.deployments, _chart_prefix("kueue-"))
    )
    results.append(
        skip("KubeRay", "components.kuberayOperator")
        if "kuberayOperator" in disabled
        else _one_deployment("KubeRay", observed.deployments, _chart_prefix("kuberay-operator-"))
    )
    results.append(
        skip("Portal", "Portal")
        if "portal" in disabled
        else _one_deployment("Portal", observed.deployments, _portal)
    )
    if "tauCoreController" in disabled:
        results += [
            skip(n, "components.tauCoreController") for n in ("Tau controller", "TauCluster")
        ]
    else:
        controller = observed.controller
        if isinstance(controller, KubeError):
            results.append(
                CheckResult("Tau controller", FAIL, f"cannot read deployment: {controller}")
            )
        elif controller is None:
            results.append(
                CheckResult("Tau controller", FAIL, f"deployment {CONTROLLER_DEPLOYMENT} not found")
            )
        else:
            ok, detail = deployment_ready(controller)
            results.append(CheckResult("Tau controller", PASS if ok else FAIL, detail))
        results.append(check_tau_cluster(observed.tau_cluster))
    results.append(
        skip("Baseline queue", "baselineQueue")
        if "baselineQueue" in disabled
        else check_baseline_queue(observed.cluster_queues)
    )
    results.append(
        skip("Quota guard", "components.tauCoreController")
        if "tauCoreController" in disabled
        else check_quota_guard(observed.policy, observed.binding)
    )
    return Report(results)


def require_api_server(client: KubeClient) -> None:
    """Waiting lets components converge, but an API server that does not answer or refuses
    these credentials will not change its mind within --timeout: fail at once instead."""
    client.request("GET", "/version", what="read the server version")


def wait_until_ready(
    read: Callable[[], Report],
    *,
    timeout: float,
    poll_interval: float,
    on_report: Callable[[Report], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Report:
    """Recompute the whole report every poll until ready or the timeout passes."""
    deadline = clock() + timeout
    while True:
        report = read()
        if on_report:
            on_report(report)
        if report.ready or clock() + poll_interval > deadline:
            return report
        sleep(poll_interval)


def controller_container(client: KubeClient, namespace: str) -> tuple[str, str] | str:
    """(pod, container) of a running, ready Tau controller pod, or why there is none.

    An installation suite's checks run inside it: the control plane's own vantage point (its
    network and DNS, its ServiceAccount, its image)."""
    try:
        deployment = client.get_or_none(DEPLOYMENTS, CONTROLLER_DEPLOYMENT, namespace)
        if deployment is None:
            return f"deployment {CONTROLLER_DEPLOYMENT} not found in {namespace}"
        labels = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        pods = client.list(PODS, namespace, label_selector=selector)
    except KubeError as error:
        return f"cannot find the controller pod: {error}"
    return ready_container(pods) or f"no running, ready {CONTROLLER_DEPLOYMENT} pod in {namespace}"


def ready_container(pods: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The first Running pod whose Ready condition is True, with its first container."""
    for pod in pods:
        status = pod.get("status") or {}
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        containers = (pod.get("spec") or {}).get("containers") or []
        if status.get("phase") == "Running" and ready and containers:
            return pod["metadata"]["name"], containers[0]["name"]
    return None


def suite_results(result: suites.SuiteResult) -> list[CheckResult]:
    """An installation suite's checks as report lines: PASS, FAIL (failed or could not run),
    SKIP; a suite that did not run to its end is one FAIL."""
    if result.error:
        return [CheckResult("suite", FAIL, result.error)]
    status = {suites.PASSED: PASS, suites.SKIPPED: SKIP}
    out = []
    for check in result.checks:
        detail = check.message
        if check.outcome == suites.ERROR:
            detail = f"could not run: {check.message or 'error'}"
        out.append(CheckResult(check.name, status.get(check.outcome, FAIL), detail))
    return out

"""The eight ordered installation checks, evaluated on recorded cluster objects."""

from __future__ import annotations

import copy

import pytest

from tau.cluster.readiness import (
    CHECKS,
    Observation,
    disabled_components,
    evaluate,
    wait_until_ready,
)
from tau.kube import UnavailableError


def deployment(name, chart="", component="", ready=1, generation=1):
    labels = {"app.kubernetes.io/instance": "taugrid"}
    if chart:
        labels["helm.sh/chart"] = chart
    if component:
        labels["app.kubernetes.io/component"] = component
    return {
        "metadata": {"name": name, "labels": labels, "generation": generation},
        "spec": {"replicas": 1},
        "status": {
            "observedGeneration": generation,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "updatedReplicas": ready,
        },
    }


def ready_observation() -> Observation:
    return Observation(
        version={"major": "1", "minor": "30+", "gitVersion": "v1.30.4"},
        deployments=[
            deployment("kueue-controller-manager", chart="kueue-0.18.2"),
            deployment("kuberay-operator", chart="kuberay-operator-1.6.2"),
            deployment("any-portal-name", component="portal"),
        ],
        controller=deployment("tau-core-controller"),
        tau_cluster={
            "metadata": {"name": "cluster", "generation": 3},
            "status": {
                "observedGeneration": 3,
                "phase": "Ready",
                "conditions": [
                    {
                        "type": "NodesReady",
                        "status": "True",
                        "reason": "NoMatchingNodes",
                        "observedGeneration": 3,
                    }
                ],
            },
        },
        cluster_queues=[
            {
                "metadata": {"name": "jobqueue"},
                "status": {"conditions": [{"type": "Active", "status": "True"}]},
            }
        ],
        policy={
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": ["tau.azure.com"],
                            "apiVersions": ["v1alpha1"],
                            "operations": ["CREATE", "UPDATE"],
                            "resources": ["quotarequests"],
                        }
                    ]
                },
            }
        },
        binding={"spec": {"policyName": "tau-quota-approval-guard", "validationActions": ["Deny"]}},
    )


def statuses(report):
    return [r.status for r in report.results]


def test_ready_cluster_passes_all_eight_checks_in_order():
    report = evaluate(ready_observation(), set())
    assert [r.name for r in report.results] == list(CHECKS)
    assert statuses(report) == ["PASS"] * 8
    assert report.lines()[-1] == "READY: 8/8 checks passed"
    assert report.lines()[0].startswith("  PASS  Kubernetes ")


def test_unready_kueue_unready_nodes_and_a_warn_only_binding_fail():
    observed = ready_observation()
    observed.deployments[0]["status"]["readyReplicas"] = 0
    observed.tau_cluster["status"]["conditions"][0]["status"] = "False"
    observed.binding["spec"]["validationActions"] = ["Warn"]
    report = evaluate(observed, set())
    assert report.lines()[-1] == "NOT READY: 5/8 checks passed"
    assert [r.name for r in report.results if r.status == "FAIL"] == [
        "Kueue",
        "TauCluster",
        "Quota guard",
    ]


def test_a_broad_quota_rule_is_rejected():
    observed = ready_observation()
    observed.policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"] = ["*"]
    assert evaluate(observed, set()).results[-1].status == "FAIL"


def test_disabling_kueue_and_kuberay_skips_them():
    observed = ready_observation()
    observed.deployments = observed.deployments[2:]
    report = evaluate(observed, {"kueue", "kuberayOperator"})
    assert statuses(report)[1:3] == ["SKIP", "SKIP"]
    assert report.lines()[-1] == "READY: 6/6 checks passed"


def test_disabling_the_tau_controller_skips_three_checks():
    observed = ready_observation()
    observed.controller = observed.tau_cluster = observed.policy = observed.binding = None
    report = evaluate(observed, {"tauCoreController"})
    assert [r.name for r in report.results if r.status == "SKIP"] == [
        "Tau controller",
        "TauCluster",
        "Quota guard",
    ]
    assert report.lines()[-1] == "READY: 5/5 checks passed"


@pytest.mark.parametrize("value", ["false", 0, None, "False"])
def test_only_a_literal_boolean_false_disables_a_component(value):
    assert disabled_components({"components": {"kueue": {"enabled": value}}}) == set()


def test_disabled_components_from_release_values():
    values = {
        "components": {"kueue": {"enabled": False}, "tauCoreController": {"enabled": False}},
        "taugrid-core": {"portal": {"enabled": False}},
        "baselineQueue": {"enabled": False},
    }
    assert disabled_components(values) == {
        "kueue",
        "tauCoreController",
        "portal",
        "baselineQueue",
    }
    assert disabled_components(None) == set()


def test_a_deployment_list_error_fails_only_the_enabled_list_based_checks():
    observed = ready_observation()
    observed.deployments = UnavailableError("cannot list deployments: API server down")
    report = evaluate(observed, {"kuberayOperator"})
    by_name = {r.name: r.status for r in report.results}
    assert by_name["Kueue"] == "FAIL" and by_name["Portal"] == "FAIL"
    assert by_name["KubeRay"] == "SKIP" and by_name["Tau controller"] == "PASS"


def test_a_release_without_its_baseline_queue_skips_that_check():
    observed = ready_observation()
    observed.cluster_queues = []
    by_name = {r.name: r for r in evaluate(observed, {"baselineQueue"}).results}
    assert by_name["Baseline queue"].status == "SKIP"
    assert "baselineQueue disabled" in by_name["Baseline queue"].detail
    assert evaluate(observed, set()).ready is False, "an enabled, missing queue still fails"


def test_old_kubernetes_fails_and_stale_taucluster_fails():
    observed = ready_observation()
    observed.version = {"major": "1", "minor": "29"}
    observed.tau_cluster["metadata"]["generation"] = 4
    report = evaluate(observed, set())
    assert statuses(report)[0] == "FAIL" and statuses(report)[5] == "FAIL"


def test_exactly_one_portal_and_one_release_queue_are_required():
    observed = ready_observation()
    observed.deployments.append(deployment("second-portal", component="portal"))
    observed.cluster_queues.append(copy.deepcopy(observed.cluster_queues[0]))
    by_name = {r.name: r for r in evaluate(observed, set()).results}
    assert by_name["Portal"].status == "FAIL" and "found 2" in by_name["Portal"].detail
    assert by_name["Baseline queue"].status == "FAIL"


def test_zero_results_is_never_ready():
    from tau.cluster.readiness import Report

    assert not Report([]).ready


def test_polling_stops_when_ready_or_when_the_timeout_passes():
    now = [0.0]
    reports = iter([evaluate(Observation(), set()), evaluate(ready_observation(), set())])
    seen = []
    result = wait_until_ready(
        lambda: next(reports),
        timeout=60,
        poll_interval=5,
        on_report=seen.append,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert result.ready and len(seen) == 2 and now[0] == 5

    now[0] = 0.0
    result = wait_until_ready(
        lambda: evaluate(Observation(), set()),
        timeout=12,
        poll_interval=5,
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    assert not result.ready and now[0] == 10


def _pod(name, phase="Running", ready="True", container="manager"):
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": container}, {"name": "sidecar"}]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": ready}]},
    }


def test_an_installation_suite_runs_in_a_running_ready_controller_container():
    from tau.cluster.readiness import ready_container

    pods = [_pod("old", phase="Pending"), _pod("starting", ready="False"), _pod("up")]
    assert ready_container(pods) == ("up", "manager")
    assert ready_container(pods[:2]) is None


def test_installation_suite_checks_become_report_lines():
    from tau.cluster import suites
    from tau.cluster.readiness import FAIL, PASS, SKIP, CheckResult, Report, suite_results

    result = suites.SuiteResult(
        checks=[
            suites.Check("site/test_site.py::test_dns[kubectl://p]", suites.PASSED, "unhealthy"),
            suites.Check(
                "test_site.py::test_mirror[kubectl://p]", suites.FAILED, "unhealthy", "no mirror"
            ),
            suites.Check(
                "test_site.py::test_gpu[kubectl://p]", suites.SKIPPED, "unhealthy", "no GPU"
            ),
            suites.Check(
                "test_site.py::test_vault[kubectl://p]", suites.ERROR, "unhealthy", "boom"
            ),
        ]
    )
    lines = suite_results(result)
    assert lines == [
        CheckResult("test_site.py::test_dns", PASS, ""),
        CheckResult("test_site.py::test_mirror", FAIL, "no mirror"),
        CheckResult("test_site.py::test_gpu", SKIP, "no GPU"),
        CheckResult("test_site.py::test_vault", FAIL, "could not run: boom"),
    ]
    report = Report([CheckResult("Kubernetes", PASS, "v1.35.4"), *lines])
    assert (report.passed, report.required, report.ready) == (2, 4, False)
    assert report.lines()[-1] == "NOT READY: 2/4 checks passed"
    timed_out = suite_results(suites.SuiteResult(error="checks did not finish within 5s"))
    assert timed_out == [CheckResult("suite", FAIL, "checks did not finish within 5s")]

"""Topology validation of GPU flavors against nodes (pure evaluation)."""

from __future__ import annotations

import pytest

from tau.cluster.topology import (
    ERROR,
    OK,
    WARN,
    evaluate_flavor,
    gpu_capacity,
    ready_profiles,
    summary,
)
from tau.errors import RuntimeFailure

FLAVOR = {
    "metadata": {"name": "h200"},
    "spec": {
        "nodeLabels": {
            "tau.azure.com/gpu-class": "h200-141gb",
            "node.kubernetes.io/instance-type": "Standard_ND96isr_H200_v5",
        },
        "nodeTaints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
    },
}


def node(name, gpus="8", zone="eastus-1", ready="True"):
    return {
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone} if zone else {}},
        "spec": {},
        "status": {
            "allocatable": {"nvidia.com/gpu": gpus},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def test_gpu_capacity_counts_quota_borrowing_and_cohorts():
    queue = {
        "spec": {
            "resourceGroups": [
                {
                    "flavors": [
                        {
                            "name": "cpu",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "0"}],
                        },
                        {
                            "name": "gpu",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}],
                        },
                        {
                            "name": "borrow",
                            "resources": [
                                {"name": "nvidia.com/gpu", "nominalQuota": 0, "borrowingLimit": "4"}
                            ],
                        },
                    ]
                }
            ]
        }
    }
    assert gpu_capacity(queue) == {
        "cpu": [],
        "gpu": ["nvidia.com/gpu"],
        "borrow": ["nvidia.com/gpu"],
    }
    queue["spec"]["cohortName"] = "research"
    assert gpu_capacity(queue)["cpu"] == ["nvidia.com/gpu"]


def test_healthy_pool_passes_every_check():
    findings = evaluate_flavor("h200", ["nvidia.com/gpu"], FLAVOR, [node("a"), node("b")], [])
    assert {f.level for f in findings} == {OK}
    assert [f.label for f in findings] == [
        "flavor h200",
        "flavor h200 gpu-allocatable",
        "flavor h200 topology-zone",
        "flavor h200 ib-capable",
    ]


def test_flavor_matching_no_node_is_an_error():
    (finding,) = evaluate_flavor("h200", ["nvidia.com/gpu"], FLAVOR, [], [])
    assert finding.level == ERROR and "0 nodes match" in finding.message
    assert summary([finding]) == "summary: 0 passed, 0 warnings, 1 errors"


def test_partial_pools_warn():
    findings = evaluate_flavor(
        "h200",
        ["nvidia.com/gpu"],
        FLAVOR,
        [node("a"), node("b", gpus="0", zone="", ready="False")],
        [],
    )
    levels = {f.label.rsplit(" ", 1)[-1]: f.level for f in findings}
    assert levels["gpu-allocatable"] == WARN
    assert levels["topology-zone"] == WARN
    assert levels["ib-capable"] == WARN


def test_missing_flavor_and_cpu_flavors():
    assert evaluate_flavor("x", ["nvidia.com/gpu"], None, [], [])[0].level == ERROR
    (skip,) = evaluate_flavor("cpu", [], {"spec": {}}, [], [])
    assert skip.level == OK and "skipped" in skip.message


def test_dra_pools_are_checked_through_resource_slices():
    slices = [{"spec": {"nodeName": "a", "driver": "gpu.nvidia.com"}}]
    findings = evaluate_flavor(
        "dra",
        ["gpu.nvidia.com"],
        {"spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-H200"}}},
        [node("a", gpus="0"), node("b", gpus="0")],
        slices,
    )
    (dra,) = [f for f in findings if "gpu-resourceslices" in f.label]
    assert dra.level == WARN and dra.message.startswith("1/2")


def tau_cluster(generation=3, observed=3, profiles=()):
    return {
        "metadata": {"name": "cluster", "generation": generation},
        "status": {
            "workloadProfiles": {"observedGeneration": observed, "profiles": list(profiles)}
        },
    }


def profile(name, queues, ready="True", generation=3):
    return {
        "name": name,
        "clusterQueues": queues,
        "conditions": [{"type": "Ready", "status": ready, "observedGeneration": generation}],
    }


def test_without_flags_every_profile_ready_at_the_current_generation_is_checked():
    cluster = tau_cluster(
        profiles=[
            profile("training.8x", ["h200-cq"]),
            profile("inference.1x", ["a100-cq", "h200-cq"]),
            profile("drifted", ["old-cq"], ready="False"),
            profile("last-revision", ["older-cq"], generation=2),
        ]
    )
    assert ready_profiles(cluster) == {
        "training.8x": ["h200-cq"],
        "inference.1x": ["a100-cq", "h200-cq"],
    }


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        (None, "no TauCluster cluster"),
        (
            tau_cluster(generation=4, observed=3),
            "not published its workload profiles for generation 4",
        ),
        (
            tau_cluster(profiles=[profile("p", ["q"], ready="False")]),
            "no workload profile Ready at generation 3",
        ),
    ],
)
def test_no_ready_profile_is_a_platform_problem_that_names_the_way_out(cluster, message):
    with pytest.raises(RuntimeFailure, match=message) as caught:
        ready_profiles(cluster)
    assert "platform operator" in caught.value.owner
    assert "--cluster-queue" in caught.value.hint

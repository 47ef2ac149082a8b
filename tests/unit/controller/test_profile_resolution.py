"""Workload profiles resolve read-only against Kueue objects into fail-closed status."""

from __future__ import annotations

from tau.controller import kubeapi as k
from tau.controller.conditions import condition
from tau.controller.profiles import (
    DEPENDENCY_STAGES,
    admission_check_names,
    multikueue_condition,
    resolve_profile_set,
)
from tau.profiles.normalize import profile_set_hash

from .world import DictWorld, active, kueue_world, profile

MK = "kueue.x-k8s.io/multikueue"
NO_MK = condition("MultiKueueReady", False, "PrerequisitesNotReady", "none", 1)


def conditions_of(record):
    return {c["type"]: (c["status"], c["reason"]) for c in record["conditions"]}


def resolve(spec, world, multikueue=NO_MK, generation=1, previous=None):
    return resolve_profile_set(spec, world, multikueue, generation, previous)


def test_ready_profile_publishes_identities_hash_and_counts():
    world = kueue_world(namespaces=("team-b", "team-a"))
    spec = {"workloadProfiles": [profile(applicability={"namespaces": ["team-a", "team-b"]})]}
    status, set_condition = resolve(spec, world)
    [record] = status["profiles"]
    assert (status["observed"], status["ready"], status["drifted"]) == (1, 1, 0)
    assert [(q["namespace"], q["clusterQueue"]) for q in record["localQueues"]] == [
        ("team-a", "jobqueue"),
        ("team-b", "jobqueue"),
    ]
    assert record["clusterQueues"] == ["jobqueue"]
    assert record["resourceFlavors"] == ["cpu", "gpu-h200"]
    assert record["flavorGpuClasses"] == {"gpu-h200": "h200-141gb"}, "cpu carries no class"
    assert record["topologies"] == ["default-node-topology"]
    assert record["workloadPriorityClasses"] == ["taugrid-default"]
    summary = conditions_of(record)
    assert all(summary[stage][0] == "True" for stage in DEPENDENCY_STAGES)
    assert summary["Ready"] == ("True", "WorkloadProfileReady")
    assert all(c["observedGeneration"] == 1 for c in record["conditions"])
    assert status["profileSetHash"] == profile_set_hash(status["profiles"])
    assert (set_condition["status"], set_condition["reason"]) == ("True", "WorkloadProfilesReady")


def test_resolution_never_writes():
    world = kueue_world()
    before = dict(world.objects)
    resolve({"workloadProfiles": [profile()]}, world)
    assert world.objects == before


def test_invalid_profile_skips_validation_of_dependencies():
    spec = {"workloadProfiles": [profile(applicability={"teams": ["Research"]})]}
    status, set_condition = resolve(spec, kueue_world())
    summary = conditions_of(status["profiles"][0])
    assert summary["Ready"] == ("False", "InvalidWorkloadProfile")
    assert {summary[s] for s in DEPENDENCY_STAGES} == {("Unknown", "ValidationSkipped")}
    assert "normal form" in status["profiles"][0]["conditions"][-1]["message"]
    assert (set_condition["status"], status["drifted"]) == ("False", 1)


def test_a_set_upstream_cannot_hash_publishes_an_empty_hash():
    """Upstream leaves profileSetHash empty when any profile fails validation, and readers
    then refuse the whole set; a merely unnormalized declaration still hashes its normal form."""
    invalid = profile(name="multi", workerCount=2)  # workerCount > 1 needs multi-node-nccl
    status, _ = resolve({"workloadProfiles": [profile(), invalid]}, kueue_world())
    assert status["profileSetHash"] == ""
    status, _ = resolve({"workloadProfiles": [profile(mode="Fixed")]}, kueue_world())
    assert status["profileSetHash"] == profile_set_hash(status["profiles"]) != ""


def test_global_profile_resolves_through_shared_local_queues():
    spec = {
        "queues": {"sharedLocalQueues": [{"namespace": "team-a", "name": "JobQueue"}]},
        "workloadProfiles": [profile(applicability=None)],
    }
    status, _ = resolve(spec, kueue_world())
    assert status["profiles"][0]["localQueues"][0]["namespace"] == "team-a"
    missing, _ = resolve({"workloadProfiles": [profile(applicability=None)]}, kueue_world())
    summary = conditions_of(missing["profiles"][0])
    assert summary["LocalQueuesResolved"] == ("False", "LocalQueuesNotResolved")
    assert summary["ClusterQueuesReady"][0] == "False"
    assert summary["Ready"] == ("False", "WorkloadProfileNotReady")


def test_inactive_cluster_queue_and_missing_priority_class():
    world = kueue_world()
    world.objects[("clusterqueues", "", "jobqueue")]["status"] = active("False")
    del world.objects[("priorityclasses", "", "taugrid-default")]
    status, _ = resolve({"workloadProfiles": [profile()]}, world)
    summary = conditions_of(status["profiles"][0])
    assert summary["ClusterQueuesReady"] == ("False", "ClusterQueuesNotReady")
    assert summary["PriorityClassesReady"] == ("False", "PriorityClassesNotReady")


def test_single_cluster_profile_refuses_an_exact_multikueue_check():
    world = kueue_world(checks=["mk", "prov"])
    world.add(k.ADMISSION_CHECKS, {"metadata": {"name": "mk"}, "spec": {"controllerName": MK}})
    world.add(
        k.ADMISSION_CHECKS,
        {"metadata": {"name": "prov"}, "spec": {"controllerName": MK + "-like"}},
    )
    status, _ = resolve({"workloadProfiles": [profile()]}, world)
    summary = conditions_of(status["profiles"][0])
    assert summary["ExecutionReady"] == ("False", "UnexpectedMultiKueueAdmissionCheck")


def test_missing_admission_check_is_not_ready():
    status, _ = resolve({"workloadProfiles": [profile()]}, kueue_world(checks=["gone"]))
    assert conditions_of(status["profiles"][0])["ExecutionReady"] == (
        "False",
        "AdmissionChecksNotReady",
    )


def test_admission_check_names_from_either_api_shape():
    legacy = {"metadata": {"name": "q"}, "spec": {"admissionChecks": ["b", "a"]}}
    strategy = {
        "metadata": {"name": "q"},
        "spec": {"admissionChecksStrategy": {"admissionChecks": [{"name": "b"}, {"name": "a"}]}},
    }
    both = {"metadata": {"name": "q"}, "spec": {**legacy["spec"], **strategy["spec"]}}
    assert admission_check_names(legacy) == (["a", "b"], "")
    assert admission_check_names(strategy) == (["a", "b"], "")
    assert admission_check_names(both)[1]


def multikueue_world(worker_active="True"):
    world = kueue_world(checks=["mk"])
    world.add(
        k.ADMISSION_CHECKS,
        {
            "metadata": {"name": "mk"},
            "spec": {
                "controllerName": MK,
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "MultiKueueConfig",
                    "name": "c",
                },
            },
            "status": active(),
        },
    )
    world.add(k.MULTIKUEUE_CONFIGS, {"metadata": {"name": "c"}, "spec": {"clusters": ["w1"]}})
    world.add(k.MULTIKUEUE_CLUSTERS, {"metadata": {"name": "w1"}, "status": active(worker_active)})
    return world


def test_multikueue_capability_walk():
    assert multikueue_condition(multikueue_world(), 3)["status"] == "True"
    inactive = multikueue_condition(multikueue_world("False"), 3)
    assert (inactive["status"], inactive["reason"]) == ("False", "PrerequisitesNotReady")
    assert "no Active workers" in inactive["message"]
    none = multikueue_condition(DictWorld(), 3)
    assert "no AdmissionCheck uses controller" in none["message"]


def test_multikueue_identity_is_the_controller_name_not_the_object_name():
    world = DictWorld().add(
        k.ADMISSION_CHECKS, {"metadata": {"name": "multikueue"}, "spec": {"controllerName": "x"}}
    )
    assert multikueue_condition(world, 1)["status"] == "False"


def test_multikueue_profile_requires_a_current_capability():
    mk_profile = profile(name="research.remote", executionTarget="multiKueue")
    world = multikueue_world()
    ready = multikueue_condition(world, 2)
    status, _ = resolve({"workloadProfiles": [mk_profile]}, world, ready, generation=2)
    assert conditions_of(status["profiles"][0])["ExecutionReady"] == ("True", "Ready")
    stale = {**ready, "observedGeneration": 1}
    status, _ = resolve({"workloadProfiles": [mk_profile]}, world, stale, generation=2)
    assert conditions_of(status["profiles"][0])["ExecutionReady"][1] == "PrerequisitesNotReady"
    plain = kueue_world()
    status, _ = resolve({"workloadProfiles": [mk_profile]}, plain, ready, generation=2)
    assert conditions_of(status["profiles"][0])["ExecutionReady"] == (
        "False",
        "MultiKueueWiringNotReady",
    )


def test_no_profiles_is_ready_and_conditions_keep_their_transition_time():
    _, set_condition = resolve({}, DictWorld())
    assert (set_condition["status"], set_condition["reason"]) == ("True", "NoWorkloadProfiles")
    spec = {"workloadProfiles": [profile()]}
    first, _ = resolve(spec, kueue_world())
    again, _ = resolve(spec, kueue_world(), previous=first)
    assert again == first


def test_an_unready_profile_names_its_cause_and_owner():
    missing, set_condition = resolve(
        {"workloadProfiles": [profile(), profile(name="research.training.2x", gpusPerWorker=2)]},
        kueue_world(namespaces=("elsewhere",)),
    )
    ready = missing["profiles"][0]["conditions"][-1]
    assert ready["message"] == (
        "not ready: LocalQueuesResolved, ClusterQueuesReady, ExecutionReady, "
        "ResourceFlavorsReady, TopologiesReady; cause: LocalQueue team-a/jobqueue not found "
        "(owner: platform operator: create the TauWorkspace for the namespace first (it "
        "creates the LocalQueue))"
    )
    assert set_condition["message"] == (
        "2 of 2 workload profiles not ready — research.training.1x, research.training.2x: "
        "LocalQueue team-a/jobqueue not found (owner: platform operator: create the "
        "TauWorkspace for the namespace first (it creates the LocalQueue))"
    )


def test_a_stopped_cluster_queue_is_the_cause_owned_by_the_queue_owner():
    world = kueue_world()
    world.objects[("clusterqueues", "", "jobqueue")]["status"] = active("False")
    _, set_condition = resolve({"workloadProfiles": [profile()]}, world)
    assert "ClusterQueue jobqueue is not Active" in set_condition["message"]
    assert (
        "(owner: platform/queue owner: create or restart the ClusterQueue"
        in (set_condition["message"])
    )


def test_flavor_gpu_classes_reach_a_reader_and_leave_upstream_s_hash_unchanged():
    """Researchers check policy.gpu_class against them (tau.resolve.placement); upstream
    hashes no such field, so a set hashes the same with or without it."""
    from tau.profiles.select import consistent

    status, _ = resolve({"workloadProfiles": [profile()]}, kueue_world())
    bare = [{k: v for k, v in p.items() if k != "flavorGpuClasses"} for p in status["profiles"]]
    assert status["profileSetHash"] == profile_set_hash(bare)
    read = consistent(1, status["profileSetHash"], tuple(status["profiles"]), "TauCluster")
    assert read.profiles[0]["flavorGpuClasses"] == {"gpu-h200": "h200-141gb"}
    edited = [dict(status["profiles"][0], flavorGpuClasses={"gpu-h200": "x", "extra": "y"})]
    read = consistent(1, status["profileSetHash"], tuple(edited), "TauCluster")
    assert read.profiles[0]["flavorGpuClasses"] == {"gpu-h200": "x"}, "only hashed flavors"

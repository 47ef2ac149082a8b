"""The phase tree, read top to bottom, stops at the first layer that is not done."""

from __future__ import annotations

import copy

from tau.lifecycle import phases as ph
from tau.lifecycle.snapshot import Snapshot


def tree(snap: Snapshot) -> dict[str, ph.Phase]:
    return {p.name: p for p in ph.build(snap)}


def first_not_done(snap: Snapshot) -> ph.Phase:
    return next(p for p in ph.build(snap) if p.status not in (ph.DONE, ph.SKIPPED))


def test_a_completed_job_has_every_phase_done_in_order(snapshot):
    snap = snapshot("completed")
    phases = ph.build(snap)
    assert [p.name for p in phases] == [
        "Submitted",
        "Kueue admission",
        "Pod scheduling",
        "DRA allocation",
        "Image pull",
        "Init containers",
        "Container start",
        "Ready",
    ]
    assert {p.status for p in phases} == {ph.DONE, ph.SKIPPED}
    names = tree(snap)
    assert names["Submitted"].detail == "batch/v1 Job created"
    assert names["Kueue admission"].detail == "1/1 finished; quota released queue=jobqueue"
    assert names["Pod scheduling"].detail.startswith("1/1 assigned to nodes: kwok-cpu-")
    assert names["DRA allocation"].detail == "no ResourceClaims requested"
    assert ph.state(snap) == "succeeded"
    assert ph.display_state(snap) == "Complete"
    assert ph.watch_complete(snap, phases) and not ph.watch_failed(snap)


def test_over_quota_stops_at_kueue_admission_with_the_quota_hint_and_owner(snapshot):
    snap = snapshot("over-quota")
    phase = first_not_done(snap)
    assert phase.name == "Kueue admission"
    assert phase.status == ph.ACTIVE
    # Kueue's long sentence becomes each flavor's shortfall, none cut off.
    assert phase.detail.startswith("0/1 admitted queue=jobqueue insufficient quota: flavor ")
    assert phase.detail.endswith(
        "flavor taugrid-gpu-h200-141gb: nvidia.com/gpu 64 requested, capacity 16, 48 more needed"
    )
    assert phase.hint == (
        "quota is reserved per LocalQueue/ClusterQueue; check queue capacity and borrowing"
    )
    assert phase.owner == ph.QUEUE_OWNER
    assert tree(snap)["Pod scheduling"].status == ph.PENDING
    assert ph.state(snap) == "queued"
    assert ph.display_state(snap) == "Pending (suspended; Kueue not yet admitted)"
    assert not ph.watch_complete(snap, ph.build(snap)) and not ph.watch_failed(snap)


def test_a_crashed_container_is_a_warning_owned_by_the_researcher(snapshot):
    snap = snapshot("failed-unknown")
    phase = first_not_done(snap)
    assert (phase.name, phase.status, phase.owner) == ("Container start", ph.WARNING, ph.RESEARCHER)
    # It ran and exited: started, then failed — not "0/1 started".
    assert phase.detail == "1/1 started reason=main=Error exit=1"
    assert "tau run logs" in phase.hint
    assert tree(snap)["Ready"].detail == "0/1 pods ready reason=Error"
    assert ph.state(snap) == "failed"
    assert ph.watch_failed(snap)


def test_a_running_job_is_ready_and_watch_stops(snapshot):
    snap = snapshot("running")
    phases = ph.build(snap)
    assert ph.state(snap) == "running"
    assert ph.display_state(snap) == "Running"
    assert ph.watch_complete(snap, phases)


def test_without_workloads_admission_waits_and_points_at_the_queue_label(snapshot):
    snap = snapshot("over-quota")
    snap.workloads = []
    phase = tree(snap)["Kueue admission"]
    assert (phase.status, phase.detail) == (ph.ACTIVE, "waiting for Kueue Workload")
    assert "kueue.x-k8s.io/queue-name" in phase.hint


def test_nothing_found_is_pending_and_not_found(snapshot):
    snap = Snapshot(name="gone", namespace="research")
    assert tree(snap)["Submitted"].detail == "no batch/v1 Job or RayJob found"
    assert ph.state(snap) == "not_found"
    assert ph.display_state(snap) == "NotFound"


def test_an_unschedulable_pod_warns_at_pod_scheduling(snapshot):
    snap = snapshot("running")
    pod = copy.deepcopy(snap.pods[0])
    pod["spec"].pop("nodeName")
    pod["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
    }
    snap.pods = [pod]
    phase = tree(snap)["Pod scheduling"]
    assert (phase.status, phase.detail) == (
        ph.WARNING,
        "0/1 assigned to nodes reason=Unschedulable",
    )
    assert phase.owner == ph.NODE_OWNER


def test_image_pull_failure_names_the_container(snapshot):
    snap = snapshot("running")
    pod = copy.deepcopy(snap.pods[0])
    pod["status"]["phase"] = "Pending"
    pod["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "ImagePullBackOff"}}
    snap.pods = [pod]
    phase = tree(snap)["Image pull"]
    assert (phase.status, phase.detail) == (ph.WARNING, "main=ImagePullBackOff")
    assert ph.startup_failed(snap)


def rayjob(deployment: str, job_status: str = "", cluster: str = "rc-1") -> dict:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": "tune", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {},
        "status": {
            "jobDeploymentStatus": deployment,
            "jobStatus": job_status,
            "rayClusterName": cluster,
            "jobId": "tune-abc",
        },
    }


def test_a_succeeded_rayjob_without_pods_reports_teardown():
    snap = Snapshot(name="tune", namespace="research", rayjob=rayjob("Complete", "SUCCEEDED"))
    snap.pods_observed = True
    phases = tree(snap)
    assert list(phases)[2] == "RayCluster"
    assert phases["Ready"].status == ph.DONE
    assert phases["Ready"].detail == "RayJob completed successfully; post-run RayCluster teardown"
    assert phases["Compute release"].detail == "resources reusable; no active Ray pods remain"
    assert ph.state(snap) == "succeeded"


def test_a_failed_rayjob_without_pods_skips_pod_phases():
    snap = Snapshot(name="tune", namespace="research", rayjob=rayjob("Failed", "FAILED"))
    snap.pods_observed = True
    phases = tree(snap)
    assert phases["Container start"].status == ph.SKIPPED
    assert phases["RayJob status"].status == ph.WARNING
    assert ph.watch_failed(snap)


def test_compute_release_is_active_while_ray_pods_hold_nodes(snapshot):
    pod = copy.deepcopy(snapshot("running").pods[0])
    snap = Snapshot(name="tune", namespace="research", rayjob=rayjob("Complete", "SUCCEEDED"))
    snap.pods, snap.pods_observed = [pod], True
    phase = tree(snap)["Compute release"]
    assert phase.status == ph.ACTIVE
    assert phase.detail.startswith("resources NOT reusable; 1 Ray pod(s) still hold 1 node(s)")


def test_a_same_name_job_takes_precedence_over_a_rayjob(snapshot):
    snap = snapshot("completed")
    snap.rayjob = rayjob("Running")
    assert snap.primary_rayjob is None
    assert "RayCluster" not in tree(snap)


def manager_view(check_state: str, message: str = "") -> Snapshot:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "mk", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"managedBy": "kueue.x-k8s.io/multikueue", "suspend": True},
        "status": {},
    }
    workload = {
        "metadata": {"name": "job-mk-1"},
        "spec": {"queueName": "mk-queue"},
        "status": {
            "conditions": [{"type": "QuotaReserved", "status": "True"}],
            "admissionChecks": [{"name": "multikueue", "state": check_state, "message": message}],
        },
    }
    return Snapshot(
        name="mk",
        namespace="research",
        job=job,
        workloads=[workload],
        check_controllers={"multikueue": "kueue.x-k8s.io/multikueue"},
    )


def test_a_manager_only_multikueue_view_places_instead_of_scheduling():
    snap = manager_view("Pending", "waiting for a worker")
    phases = tree(snap)
    assert phases["MultiKueue placement"].status == ph.ACTIVE
    assert phases["MultiKueue placement"].detail == "waiting for a worker"
    assert phases["Pod scheduling"].status == ph.SKIPPED
    assert phases["Pod scheduling"].detail == ph.MANAGER_VIEW
    assert not ph.watch_failed(snap) and not ph.watch_complete(snap, ph.build(snap))


def test_a_rejected_multikueue_placement_fails_the_watch():
    snap = manager_view("Rejected", "no worker has the flavor")
    assert tree(snap)["MultiKueue placement"].status == ph.WARNING
    assert ph.watch_failed(snap)


def test_a_ready_multikueue_placement_completes_the_watch():
    snap = manager_view("Ready")
    assert tree(snap)["MultiKueue placement"].detail == "worker-cluster placement ready"
    assert ph.watch_complete(snap, ph.build(snap))


def test_a_preempted_pod_is_not_blamed_on_the_application(snapshot):
    snap = snapshot("preempted")
    phase = tree(snap)["Container start"]
    assert phase.status == ph.WARNING
    assert phase.detail == "1/1 started reason=main=Error exit=137 (preemption)"
    assert phase.owner == ph.QUEUE_OWNER
    assert "not an application error" in phase.hint
    assert tree(snap)["Ready"].owner == ph.QUEUE_OWNER


def test_a_kubelet_termination_is_owned_by_the_node_pool(snapshot):
    snap = snapshot("evicted")
    phase = tree(snap)["Container start"]
    assert phase.owner == ph.NODE_OWNER
    assert "(node disruption)" in phase.detail

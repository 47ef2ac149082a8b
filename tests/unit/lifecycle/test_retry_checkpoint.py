"""Where automatic retry may promise a checkpoint: only on a volume that outlives the pod."""

from __future__ import annotations

from tau.lifecycle.retry import durable_mount
from tau.run.failures import retry_env

CHECKPOINT = "/data/checkpoints/finetunes/train"


def job(volumes: list[dict], mounts: list[dict]) -> dict:
    container = {"name": "main", "volumeMounts": mounts}
    return {
        "kind": "Job",
        "spec": {"template": {"spec": {"containers": [container], "volumes": volumes}}},
    }


def test_a_claim_mounted_at_data_holds_the_checkpoint():
    workload = job(
        [{"name": "data", "persistentVolumeClaim": {"claimName": "research-data"}}],
        [{"name": "data", "mountPath": "/data"}],
    )
    assert durable_mount(workload, CHECKPOINT) == "/data"


def test_nothing_mounted_or_only_scratch_holds_no_checkpoint():
    assert durable_mount(job([], []), CHECKPOINT) == ""
    scratch = job([{"name": "tmp", "emptyDir": {}}], [{"name": "tmp", "mountPath": "/data"}])
    assert durable_mount(scratch, CHECKPOINT) == ""
    elsewhere = job(
        [{"name": "out", "persistentVolumeClaim": {"claimName": "out"}}],
        [{"name": "out", "mountPath": "/database"}],
    )
    assert durable_mount(elsewhere, CHECKPOINT) == ""


def test_every_ray_group_must_mount_it():
    pod = {"containers": [{"name": "ray", "volumeMounts": [{"name": "d", "mountPath": "/data"}]}],
           "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "c"}}]}  # fmt: skip
    bare = {"containers": [{"name": "ray"}]}
    spec = {"rayClusterSpec": {"headGroupSpec": {"template": {"spec": pod}},
                               "workerGroupSpecs": [{"template": {"spec": bare}}]}}  # fmt: skip
    assert durable_mount({"kind": "RayJob", "spec": spec}, CHECKPOINT) == ""


def test_without_a_durable_checkpoint_the_retry_env_sets_no_resume_path():
    env = retry_env((("A", "1"),), checkpoint="", attempt=1, maximum=2, reason="Preempted")
    assert dict(env) == {
        "A": "1",
        "TAU_RETRY_ATTEMPT": "1",
        "TAU_RETRY_MAX": "2",
        "TAU_RETRY_REASON": "Preempted",
    }

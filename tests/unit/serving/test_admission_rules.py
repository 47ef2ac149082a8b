"""The pure admission rules: when a LocalQueue is unusable, and which profiles can serve."""

from __future__ import annotations

import pytest

from tau.errors import ValidationError
from tau.serving.plan import check_shape
from tau.serving.queue import unusable
from tau.serving.request import DeployRequest


def local_queue(spec: dict, conditions: list[dict] | None = None) -> dict:
    return {"spec": spec, "status": {"conditions": conditions or []}}


@pytest.mark.parametrize(
    ("lq", "why"),
    [
        (local_queue({"clusterQueue": "jobqueue"}), ""),
        (local_queue({}), "it names no ClusterQueue"),
        (
            local_queue({"clusterQueue": "q", "stopPolicy": "Hold"}),
            "it is stopped (stopPolicy Hold)",
        ),
        (
            local_queue({"clusterQueue": "q", "stopPolicy": "HoldAndDrain"}),
            "it is stopped (stopPolicy HoldAndDrain)",
        ),
        (local_queue({"clusterQueue": "q", "stopPolicy": "None"}), ""),
        (
            local_queue(
                {"clusterQueue": "q"},
                [
                    {
                        "type": "Active",
                        "status": "False",
                        "reason": "ClusterQueueDoesNotExist",
                        "message": "Can't submit new workloads to clusterQueue",
                    }
                ],
            ),
            "it is not active (ClusterQueueDoesNotExist: Can't submit new workloads to"
            " clusterQueue)",
        ),
        (local_queue({"clusterQueue": "q"}, [{"type": "Active", "status": "True"}]), ""),
    ],
)
def test_a_local_queue_is_usable_only_when_kueue_would_admit_through_it(lq, why):
    assert unusable(lq) == why


def test_a_multikueue_profile_cannot_serve():
    profile = {
        "name": "remote",
        "gpusPerWorker": 1,
        "workerCount": 1,
        "executionTarget": "multiKueue",
    }
    with pytest.raises(ValidationError) as caught:
        check_shape(DeployRequest(name="svc"), profile)
    assert caught.value.one_line().startswith(
        'workload profile "remote" dispatches through multiKueue; serving needs a singleCluster'
        " profile"
    )


def test_flags_may_restate_the_profile_shape():
    profile = {
        "name": "p",
        "gpusPerWorker": 8,
        "workerCount": 2,
        "mode": "fixed",
        "placement": "multi-node-nccl",
    }
    assert check_shape(DeployRequest(name="svc", gpus=8, nodes=2), profile) == (8, 2)

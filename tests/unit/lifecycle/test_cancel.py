"""`tau run cancel` of a MultiKueue run waits, bounded by `--timeout`, until the manager's
Workloads of the run are gone: until then the worker cluster may still hold the quota.

MultiKueue needs a second cluster, which the local control plane does not run; the API
server is scripted here to answer as a manager whose worker has not cleaned up yet.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tau import keys
from tau.errors import RuntimeFailure
from tau.kube import KubeClient
from tau.lifecycle.runs import cancel, describe_workloads
from tests.unit.scripted_api import ScriptedServer, scripted_api

NS = "team-a"
JOB = f"/apis/batch/v1/namespaces/{NS}/jobs/train"
WORKLOADS = f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{NS}/workloads"
PODS = f"/api/v1/namespaces/{NS}/pods"
WORKLOAD = {
    "metadata": {"name": "job-train-1a2b3"},
    "status": {
        "admissionChecks": [
            {
                "name": "multikueue",
                "state": "Ready",
                "message": 'The workload got reservation on "w1"',
            }
        ]
    },
}


@pytest.fixture
def manager(tmp_path: Path) -> Iterator[tuple[ScriptedServer, KubeClient]]:
    with scripted_api(tmp_path) as (script, kubeconfig):
        managed = {"metadata": {"name": "train", "uid": "u-1"}, "spec": {}}
        managed["spec"]["managedBy"] = keys.MULTIKUEUE_CONTROLLER
        script.answer("GET", JOB, 200, managed)
        script.answer("DELETE", JOB, 200, {"kind": "Status", "status": "Success"})
        script.answer("GET", PODS, 200, {"items": []})
        script.answer("GET", WORKLOADS, 200, {"items": [WORKLOAD]})
        yield script, KubeClient(kubeconfig, "stand-in")


def test_a_workload_still_on_the_manager_past_the_timeout_fails_naming_the_flag(manager):
    script, kube = manager
    said: list[str] = []
    with pytest.raises(RuntimeFailure) as failure:
        cancel(kube, NS, "train", timeout=0.2, interval=0.05, say=said.append)
    message = str(failure.value)
    assert "timed out after 0.2s (--timeout)" in message
    assert f"manager Workloads of {NS}/train" in message
    assert "job-train-1a2b3/multikueue=Ready" in message
    assert failure.value.owner.startswith("platform operator")
    assert said[0] == 'job.batch "train" deleted'
    assert said[1].startswith("waiting for MultiKueue to remove the manager Workloads of train")
    selectors = {
        parse_qs(urlsplit(path).query)["labelSelector"][0]
        for _, path, _, _ in script.requests
        if path.startswith(WORKLOADS)
    }
    assert selectors == {f"{keys.JOB}=train", f"{keys.KUEUE_JOB_UID}=u-1"}


def test_cancel_returns_once_the_manager_workloads_are_gone(manager):
    script, kube = manager

    def worker_cleans_up(seconds: float) -> None:
        script.answer("GET", WORKLOADS, 200, {"items": []})

    said: list[str] = []
    assert cancel(kube, NS, "train", timeout=30, say=said.append, sleep=worker_cleans_up)
    assert said[-2:] == [
        "MultiKueue manager Workloads of train removed",
        "compute released: no RayCluster or pods remain for train",
    ]


def test_no_wait_leaves_the_manager_workloads_to_multikueue(manager):
    _, kube = manager
    said: list[str] = []
    assert cancel(kube, NS, "train", wait=False, timeout=0.01, say=said.append)
    assert not any("MultiKueue" in line for line in said)


def test_each_admission_check_is_shown_with_its_state_and_message() -> None:
    pending = {"metadata": {"name": "w2"}, "status": {}}
    assert describe_workloads([WORKLOAD, pending]) == (
        'job-train-1a2b3/multikueue=Ready(The workload got reservation on "w1"), w2'
    )

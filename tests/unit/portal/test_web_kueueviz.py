"""Kueue (Live): the KueueViz backend contract the Portal serves over its watch cache.

Each test opens the socket (or page) the KueueViz frontend opens and checks the fields its
pages read (src/*.jsx of sigs.k8s.io/kueue cmd/kueueviz/frontend): the Workloads come from the
recorded snapshots of real Kueue admission decisions, the queues are Kueue v1beta2 objects.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tau import keys
from tau.kube.resources import CLUSTER_QUEUES, WORKLOADS
from tau.portal.web.config import PortalConfig
from tau.portal.web.kueueviz import PREFIX, SUBPROTOCOL, check_bundle

from .test_cli import portal as portal_cli
from .web_helpers import client, portal, recorded

NS = "research"
CQ = "jobqueue"
GPU_FLAVOR = "taugrid-gpu-h200-141gb"


def _objects() -> list[dict[str, Any]]:
    cluster_queue = {
        "kind": "ClusterQueue",
        "metadata": {
            "name": CQ,
            "uid": "cq-uid",
            "creationTimestamp": "2026-11-29T10:00:00Z",
            "managedFields": [{"manager": "kubectl"}],
        },
        "spec": {
            "cohortName": "research-pool",
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": GPU_FLAVOR,
                            "resources": [
                                {"name": "cpu", "nominalQuota": "500m"},
                                {"name": "memory", "nominalQuota": "2Gi", "borrowingLimit": "1Gi"},
                                {"name": "nvidia.com/gpu", "nominalQuota": 16},
                            ],
                        }
                    ],
                }
            ],
        },
        "status": {
            "flavorsUsage": [
                {
                    "name": GPU_FLAVOR,
                    "resources": [
                        {"name": "cpu", "total": "250m", "borrowed": "0"},
                        {"name": "memory", "total": "1Gi", "borrowed": "0"},
                        {"name": "nvidia.com/gpu", "total": "8", "borrowed": "0"},
                    ],
                }
            ],
            "flavorsReservation": [
                {"name": GPU_FLAVOR, "resources": [{"name": "nvidia.com/gpu", "total": "8"}]}
            ],
            "pendingWorkloads": 1,
            "admittedWorkloads": 1,
            "reservingWorkloads": 1,
        },
    }
    local_queue = {
        "kind": "LocalQueue",
        "metadata": {"name": CQ, "namespace": NS, "uid": "lq-uid"},
        "spec": {"clusterQueue": CQ},
        "status": {
            "pendingWorkloads": 1,
            "admittedWorkloads": 1,
            "flavorsUsage": [
                {"name": GPU_FLAVOR, "resources": [{"name": "nvidia.com/gpu", "total": "8"}]}
            ],
            "flavorsReservation": [
                {"name": GPU_FLAVOR, "resources": [{"name": "memory", "total": "512Mi"}]}
            ],
        },
    }
    pending = recorded("over-quota")["workloads"][0]
    admitted = copy.deepcopy(recorded("completed")["workloads"][0])
    admitted["status"]["conditions"] = [
        c for c in admitted["status"]["conditions"] if c["type"] != "Finished"
    ]
    owner = admitted["metadata"]["ownerReferences"][0]
    pod = {
        "kind": "Pod",
        "metadata": {
            "name": f"{owner['name']}-abcde",
            "namespace": NS,
            "ownerReferences": [{"kind": "Job", "name": owner["name"], "uid": owner["uid"]}],
        },
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": "0/3 nodes are available",
                }
            ],
        },
    }
    unrelated_pod = {
        "kind": "Pod",
        "metadata": {"name": "someone-else", "namespace": NS},
        "status": {"phase": "Running"},
    }
    event = {
        "kind": "Event",
        "metadata": {"name": "wl.1", "namespace": NS, "creationTimestamp": "2026-11-29T10:09:43Z"},
        "involvedObject": {"kind": "Workload", "name": pending["metadata"]["name"]},
        "reason": "Pending",
        "message": "couldn't assign flavors",
        "type": "Normal",
        "firstTimestamp": None,
        "eventTime": "2026-11-29T10:09:44.000000Z",
    }
    job_event = {
        "kind": "Event",
        "metadata": {"name": "job.1", "namespace": NS},
        "involvedObject": {"kind": "Job", "name": pending["metadata"]["name"]},
        "reason": "Suspended",
        "firstTimestamp": "2026-11-29T10:09:43Z",
    }
    flavor = {
        "kind": "ResourceFlavor",
        "metadata": {"name": GPU_FLAVOR},
        "spec": {
            "nodeLabels": {"tau.azure.com/gpu-class": "h200-141gb"},
            "nodeTaints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
        },
    }
    gpu_node = {
        "kind": "Node",
        "metadata": {"name": "h200-0", "labels": {"tau.azure.com/gpu-class": "h200-141gb"}},
        "spec": {"taints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]},
    }
    cpu_node = {"kind": "Node", "metadata": {"name": "cpu-0", "labels": {}}}
    parent = {"kind": "Cohort", "metadata": {"name": "org"}, "spec": {}}
    cohort = {
        "kind": "Cohort",
        "metadata": {"name": "research-pool"},
        "spec": {"parentName": "org"},
    }
    return [
        cluster_queue, local_queue, pending, admitted, pod, unrelated_pod, event, job_event,
        flavor, gpu_node, cpu_node, parent, cohort,
    ]  # fmt: skip


def _bundle(root: Path) -> Path:
    """A bundle laid out as hack/setup/25-kueueviz.sh writes it (index.html for PREFIX)."""
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_text(
        f'<html><head><script src="{PREFIX}/env.js"></script>'
        f'<script type="module" src="{PREFIX}/assets/index-1.js"></script></head>'
        '<body><div id="root"></div></body></html>'
    )
    (root / "assets" / "index-1.js").write_text("console.log('app')")
    (root / "env.js").write_text("window.env = {};")
    (root / "kueueviz.png").write_bytes(b"\x89PNG")
    return root


@pytest.fixture
def served(tmp_path: Path) -> Any:
    config = PortalConfig(namespaces=(NS,), kueueviz_bundle=_bundle(tmp_path / "bundle"))
    made = portal(config, _objects())
    return made, client(made)


def _socket(http: TestClient, path: str, **headers: str) -> Any:
    return http.websocket_connect(
        f"ws://localhost{PREFIX}/ws/{path}",
        subprotocols=[SUBPROTOCOL, "kueueviz.auth.dG9rZW4"],
        headers=headers,
    )


def _receive(http: TestClient, path: str) -> Any:
    with _socket(http, path) as ws:
        assert ws.accepted_subprotocol == SUBPROTOCOL
        return json.loads(ws.receive_text())


def test_cluster_queues_carry_counts_flavors_and_numeric_quota_and_usage(served: Any) -> None:
    _, http = served
    [cq] = _receive(http, "cluster-queues")
    assert cq["name"] == CQ and cq["cohort"] == "research-pool" and cq["flavors"] == [GPU_FLAVOR]
    assert (cq["admittedWorkloads"], cq["pendingWorkloads"], cq["reservingWorkloads"]) == (1, 1, 1)
    quotas = {r["name"]: r for r in cq["resourceGroups"][0]["flavors"][0]["resources"]}
    assert quotas["cpu"]["nominalQuota"] == 0.5
    assert quotas["memory"]["nominalQuota"] == 2 * 2**30
    assert quotas["memory"]["borrowingLimit"] == 2**30
    assert quotas["nvidia.com/gpu"]["nominalQuota"] == 16
    usage = {r["name"]: r for r in cq["flavorsUsage"][0]["resources"]}
    assert usage["cpu"]["total"] == 0.25 and usage["nvidia.com/gpu"]["total"] == 8


def test_cluster_queue_detail_is_the_object_with_its_local_queues(served: Any) -> None:
    _, http = served
    cq = _receive(http, f"cluster-queue/{CQ}")
    assert cq["metadata"]["uid"] == "cq-uid" and "managedFields" not in cq["metadata"]
    assert cq["spec"]["cohortName"] == "research-pool"
    assert cq["status"]["flavorsReservation"][0]["resources"][0]["total"] == 8
    [queue] = cq["queues"]
    assert (queue["name"], queue["namespace"]) == (CQ, NS)
    assert queue["reservation"][0]["resources"][0] == {"name": "memory", "total": 512 * 2**20}
    assert queue["usage"][0]["resources"][0]["total"] == 8
    missing = _receive(http, "cluster-queue/nope")
    assert "no ClusterQueue 'nope'" in missing["error"]


def test_the_dashboard_shows_each_workload_with_owner_preemption_and_pods(served: Any) -> None:
    _, http = served
    board = _receive(http, "workloads/dashboard?namespace=")
    assert [q["name"] for q in board["queues"]] == [CQ]
    assert [c["name"] for c in board["clusterQueues"]] == [CQ]
    items = {w["metadata"]["name"]: w for w in board["workloads"]["items"]}
    pending = items["job-over-quota-d543e"]
    assert pending["ownerReferences"][0] == {
        **pending["metadata"]["ownerReferences"][0],
        "kind": "Job",
        "name": "over-quota",
    }
    assert pending["preemption"] == {"preempted": False, "reason": ""}
    # Still pending: Kueue's own reason is the QuotaReserved condition the page shows.
    [reserved] = pending["status"]["conditions"]
    assert reserved["type"] == "QuotaReserved" and "insufficient quota" in reserved["message"]
    assert pending["pods"] == []
    [admitted] = [w for name, w in items.items() if name != "job-over-quota-d543e"]
    [pod] = admitted["pods"]
    assert pod["status"]["phase"] == "Pending"
    assert pod["status"]["conditions"][0]["reason"] == "Unschedulable"
    by_uid = board["workloads"]["workloads_by_uid"]
    assert by_uid[pending["metadata"]["uid"]] == f"{NS}/job-over-quota-d543e"


def test_namespaces_and_the_namespace_filter_stay_in_the_portal_scope(served: Any) -> None:
    _, http = served
    assert _receive(http, "namespaces") == {"namespaces": [NS]}
    listed = _receive(http, f"workloads?namespace={NS}")["workloads"]["items"]
    assert len(listed) == 2
    outside = _receive(http, "workloads?namespace=kube-system")
    assert "not in this Portal's scope" in outside["error"]
    assert "not in this Portal's scope" in _receive(http, "local-queue/kube-system/q")["error"]


def test_a_pending_workload_names_its_cluster_queue_and_its_events(served: Any) -> None:
    _, http = served
    workload = _receive(http, f"workload/{NS}/job-over-quota-d543e")
    # Not admitted yet: the ClusterQueue is the one its LocalQueue points at.
    assert workload["clusterQueueName"] == CQ
    assert workload["spec"]["queueName"] == CQ
    [event] = _receive(http, f"workload/{NS}/job-over-quota-d543e/events")
    assert (event["reason"], event["type"], event["name"]) == ("Pending", "Normal", "wl.1")
    # events.k8s.io events carry eventTime only; the page formats firstTimestamp.
    assert event["firstTimestamp"] == "2026-11-29T10:09:44.000000Z"


def test_local_queue_detail_and_its_admitted_workloads(served: Any) -> None:
    _, http = served
    queue = _receive(http, f"local-queue/{NS}/{CQ}")
    assert queue["metadata"]["uid"] == "lq-uid" and queue["spec"]["clusterQueue"] == CQ
    assert queue["status"]["flavorsUsage"][0]["resources"][0]["total"] == 8
    admitted = _receive(http, f"local-queue/{NS}/{CQ}/workloads")
    assert [w["metadata"]["name"] for w in admitted] == ["job-completed-704a0"]
    assert [q["name"] for q in _receive(http, "local-queues")] == [CQ]


def test_resource_flavors_show_their_details_queues_and_matching_nodes(served: Any) -> None:
    _, http = served
    [listed] = _receive(http, "resource-flavors")
    assert listed["name"] == GPU_FLAVOR
    assert listed["details"]["nodeLabels"] == {"tau.azure.com/gpu-class": "h200-141gb"}
    detail = _receive(http, f"resource-flavor/{GPU_FLAVOR}")
    [queue] = detail["queues"]
    assert queue["queueName"] == CQ
    assert {q["resource"]: q["nominalQuota"] for q in queue["quota"]}["nvidia.com/gpu"] == "16"
    assert [n["name"] for n in detail["nodes"]] == ["h200-0"]
    assert detail["nodes"][0]["taints"][0]["key"] == "sku"


def test_cohorts_come_from_cohort_objects_and_cluster_queue_membership(served: Any) -> None:
    _, http = served
    cohorts = {c["name"]: c for c in _receive(http, "cohorts")}
    assert cohorts["research-pool"]["parentName"] == "org"
    assert cohorts["research-pool"]["clusterQueues"] == [{"name": CQ}]
    assert cohorts["org"]["clusterQueues"] == []
    detail = _receive(http, "cohort/research-pool")
    assert [cq["name"] for cq in detail["clusterQueues"]] == [CQ]
    assert detail["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][0]["name"] == (
        GPU_FLAVOR
    )


def test_an_open_socket_is_sent_the_new_document_when_the_cache_changes(served: Any) -> None:
    made, http = served
    with _socket(http, "cluster-queues") as ws:
        [before] = json.loads(ws.receive_text())
        assert before["pendingWorkloads"] == 1
        informer = made.cache.informer(CLUSTER_QUEUES)
        changed = copy.deepcopy(informer.items[CQ])
        changed["status"]["pendingWorkloads"] = 3
        informer.items[CQ] = changed
        informer.generation += 1
        started = time.monotonic()
        [after] = json.loads(ws.receive_text())
        assert after["pendingWorkloads"] == 3 and time.monotonic() - started < 10


def test_a_deleted_workload_page_is_told_so_on_its_open_socket(served: Any) -> None:
    made, http = served
    with _socket(http, f"workload/{NS}/job-over-quota-d543e") as ws:
        assert json.loads(ws.receive_text())["metadata"]["name"] == "job-over-quota-d543e"
        informer = made.cache.informer(WORKLOADS, NS)
        informer.items.pop("job-over-quota-d543e")
        informer.generation += 1
        assert "no 'job-over-quota-d543e'" in json.loads(ws.receive_text())["error"]


def test_a_socket_from_another_origin_or_host_is_refused(served: Any) -> None:
    _, http = served
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        _socket(http, "namespaces", origin="http://attacker.example"),
    ):
        pass
    assert refused.value.code == 1008
    with _socket(http, "namespaces", origin="http://localhost") as ws:
        assert json.loads(ws.receive_text()) == {"namespaces": [NS]}
    with pytest.raises(WebSocketDisconnect), _socket(http, "namespaces", host="attacker.example"):
        pass


def test_pages_assets_and_client_routes_come_from_the_bundle(served: Any) -> None:
    made, http = served
    bundle = made.config.kueueviz_bundle
    root = http.get(PREFIX, follow_redirects=False)
    assert root.status_code == 302 and root.headers["location"] == PREFIX + "/"
    for path in ("/", "/cluster-queues", f"/workload/{NS}/x", "/cluster-queue/jobqueue"):
        page = http.get(PREFIX + path)
        assert page.status_code == 200 and f"{PREFIX}/assets/index-1.js" in page.text
    assert http.get(f"{PREFIX}/assets/index-1.js").text == "console.log('app')"
    assert http.get(f"{PREFIX}/env.js").status_code == 200
    # The app's navigation bar asks for its logo at the site root.
    assert http.get("/kueueviz.png").content == b"\x89PNG"
    assert http.get(f"{PREFIX}/missing.js").status_code == 404
    # A file beside the bundle is not served through it.
    (bundle.parent / "secret.txt").write_text("do not serve")
    outside = http.get(f"{PREFIX}/..%2Fsecret.txt")
    assert outside.status_code == 404 and "do not serve" not in outside.text
    assert http.get(f"{PREFIX}/auth/status").json() == {"authMode": "Disabled"}


def test_the_yaml_view_shows_objects_in_scope_without_managed_fields(served: Any) -> None:
    _, http = served
    shown = http.get(f"/api/clusterqueue/{CQ}", params={"output": "yaml"}).json()["content"]
    assert "kind: ClusterQueue" in shown and "managedFields" not in shown
    assert "nominalQuota: 500m" in shown, "the YAML view is the object as stored"
    workload = http.get("/api/workload/job-over-quota-d543e", params={"namespace": NS}).json()
    assert "queueName: jobqueue" in workload["content"]
    outside = http.get("/api/localqueue/jobqueue", params={"namespace": "kube-system"})
    assert outside.status_code == 404 and "not in this Portal's scope" in outside.json()["reason"]
    # The Portal's own /api/ routes keep answering.
    assert http.get("/api/portal/workspaces").status_code == 200
    assert http.get("/api/stellar/experiments").status_code == 503


def test_kueueviz_is_absent_unless_enabled() -> None:
    http = client(portal(PortalConfig(namespaces=(NS,)), _objects()))
    assert http.get(f"{PREFIX}/").status_code != 200
    assert http.get(f"/api/clusterqueue/{CQ}").status_code != 200


def test_a_bundle_not_built_for_the_portal_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Exception, match=r"no index\.html"):
        check_bundle(tmp_path)
    (tmp_path / "index.html").write_text('<script type="module" src="/assets/index-1.js">')
    with pytest.raises(Exception, match="was not built for the /kueueviz/ path"):
        check_bundle(tmp_path)
    assert check_bundle(_bundle(tmp_path / "good")) == (tmp_path / "good").resolve()


def test_portal_serve_kueueviz_errors_are_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(keys.ENV_KUEUEVIZ_BUNDLE, raising=False)
    code, _, err = portal_cli(capsys, "portal", "serve", "-n", NS, "--kueueviz")
    assert code == 2 and "--kueueviz-bundle" in err and len(err.strip().splitlines()) == 1
    bundle = str(_bundle(tmp_path / "bundle"))
    code, _, err = portal_cli(capsys, "portal", "serve", "--kueueviz", "--kueueviz-bundle", bundle)
    assert code == 2 and "-n/--namespace" in err and "portal.workloadNamespace" in err
    assert "Traceback" not in err

"""The API requests a researcher's commands send, counted in the real CLI process.

A submission reads only what the next request does not already answer: the TauWorkspace
(once, even when the connection is re-verified first), the TauCluster profiles and the
LocalQueue, then creates the Job. `tau run status --watch` lists and watches instead of
polling: an idle run costs one LIST and one WATCH per read however many times the screen
refreshes, a change refreshes it at once, a watch whose resourceVersion has expired (410
Gone) relists, and Ctrl-C ends it at once.
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from lifecycle_env import CONTEXT, Workspace, job_target, workspace_setup
from tau_cli import traced_popen, traced_requests

from hack.localcluster import LocalCluster
from tau.kube.informer import CountingClient, Informer
from tau.kube.resources import LOCAL_QUEUES

IDLE_SECONDS = 20
WORKSPACES = "/apis/tau.azure.com/v1alpha1"
KUEUE = "/apis/kueue.x-k8s.io/v1beta2"


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    yield from workspace_setup(local_cluster, tmp_path_factory.mktemp("lifecycle-requests"))


def submitted(ws: Workspace, name: str) -> list[str]:
    """The requests of `tau run NAME` (a fresh target), without their query strings."""
    ws.target(name, job_target(name))
    process = traced_popen("run", name, cwd=ws.repo, env=ws.env)
    _out, err = process.communicate(timeout=180)
    assert process.returncode == 0, err
    return [request.split("?")[0] for request in traced_requests(err)]


def test_a_submission_reads_the_workspace_and_its_profiles_then_creates(ws: Workspace) -> None:
    verified = ws.tau("workspace", "connection")  # fresh readiness evidence from here on
    assert verified.returncode == 0, verified.stderr
    assert submitted(ws, "req-fresh") == [
        f"GET {WORKSPACES}/namespaces/{ws.system_namespace}/workspaces/{ws.name}",
        f"GET {WORKSPACES}/clusters/cluster",
        f"GET {KUEUE}/namespaces/{ws.namespace}/localqueues/jobqueue",
        f"POST /apis/batch/v1/namespaces/{ws.namespace}/jobs",
    ]


def test_a_reverified_connection_spares_the_submission_its_own_reads(ws: Workspace) -> None:
    """Evidence older than 5 minutes re-verifies the connection (TauWorkspace, LocalQueue,
    access reviews); the submission then checks that same TauWorkspace object."""
    stale = (datetime.now(UTC) - timedelta(minutes=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for path in (Path(ws.env["TAU_CONFIG_DIR"]) / "connections").glob("*.json"):
        state = json.loads(path.read_text())
        path.write_text(json.dumps({**state, "verified_at": stale}))
    sent = submitted(ws, "req-stale")
    counts = Counter(sent)
    assert counts[f"GET {WORKSPACES}/namespaces/{ws.system_namespace}/workspaces/{ws.name}"] == 1
    # once by the verification, once by the submission: it may have been deleted in between
    assert counts[f"GET {KUEUE}/namespaces/{ws.namespace}/localqueues/jobqueue"] == 2
    assert counts["POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews"] >= 1
    assert sent[-3:] == [
        f"GET {WORKSPACES}/clusters/cluster",
        f"GET {KUEUE}/namespaces/{ws.namespace}/localqueues/jobqueue",
        f"POST /apis/batch/v1/namespaces/{ws.namespace}/jobs",
    ]


def idle_job(ws: Workspace, name: str) -> None:
    """A suspended Job outside Kueue (no queue label): nothing will ever change it."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ws.namespace},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "example.azurecr.io/idle:1"}],
                }
            },
        },
    }
    ws.kubectl("create", "-f", "-", input=json.dumps(job))


def read_of(request: str) -> tuple[str, str, str]:
    """(path, label selector, field selector): which read a LIST or WATCH request serves."""
    url = urlsplit(request.split(" ", 1)[1])
    query = parse_qs(url.query)
    return url.path, query.get("labelSelector", [""])[0], query.get("fieldSelector", [""])[0]


def test_an_idle_watched_run_costs_one_list_and_one_watch_per_read(ws: Workspace) -> None:
    idle_job(ws, "idle")
    watcher = traced_popen(
        "run", "status", "idle", "--watch", "--interval", "1s",
        "--max-iterations", str(IDLE_SECONDS), cwd=ws.repo, env=ws.env,
    )  # fmt: skip
    assert watcher.stdout is not None
    header = f"watching {ws.namespace}/idle every 1s"
    assert watcher.stdout.readline().startswith(header)  # the first refresh is on screen
    out, err = watcher.communicate(timeout=IDLE_SECONDS + 60)
    assert watcher.returncode == 0, err
    refreshes = 1 + out.count(header)
    assert refreshes >= IDLE_SECONDS // 4, out + err
    sent = traced_requests(err)
    watches = [r for r in sent if "watch=1" in r]
    lists = [r for r in sent if "watch=1" not in r]
    assert all(r.startswith("GET ") for r in sent), sent
    # Each read of the snapshot (Job, RayJob, Workloads, pods, events) is listed once and
    # then followed by one long watch from the list's resourceVersion; refreshing re-reads
    # memory only.
    assert Counter(map(read_of, lists)) == Counter(map(read_of, watches)), sent
    assert set(Counter(map(read_of, lists)).values()) == {1}, sent
    assert all("resourceVersion=" in w and "allowWatchBookmarks=true" in w for w in watches)


def test_a_change_refreshes_the_watch_before_its_interval(ws: Workspace) -> None:
    idle_job(ws, "changes")
    watcher = traced_popen(
        "run", "status", "changes", "--watch", "--interval", "120s", "--max-iterations", "2",
        cwd=ws.repo, env=ws.env,
    )  # fmt: skip
    assert watcher.stdout is not None
    first = watcher.stdout.readline()
    assert first.startswith(f"watching {ws.namespace}/changes every 120s"), first
    time.sleep(3)  # the watches are open
    ws.kubectl("label", "job", "changes", "-n", ws.namespace, "team=vision")
    out, err = watcher.communicate(timeout=60)  # well before the 120 s interval
    assert watcher.returncode == 0, err
    assert out.count(f"watching {ws.namespace}/changes every 120s") == 1  # the second one
    job_reads = [r for r in traced_requests(err) if "fieldSelector=metadata.name%3Dchanges" in r]
    assert len(job_reads) == 4, job_reads  # LIST + WATCH for the Job and for the RayJob


def test_a_watch_from_an_expired_resource_version_relists(ws: Workspace) -> None:
    """The API server answers 410 Gone for a resourceVersion older than its watch cache; the
    informer then lists again instead of failing or serving stale objects. A custom
    resource's watch cache starts when its CRD is established, so version 1 is always older
    than it (a built-in type's cache starts with the API server, at version 1 on a young
    cluster, and would replay history instead)."""
    kube = CountingClient(ws.env["KUBECONFIG"], CONTEXT)
    queue = "jobqueue"
    informer = Informer(kube, LOCAL_QUEUES, ws.namespace, field_selector=f"metadata.name={queue}")
    informer._relist()
    assert set(informer.items) == {queue}
    informer.resource_version = "1"
    assert informer._watch_once() is False  # 410 Gone: relist
    informer._relist()
    assert set(informer.items) == {queue} and informer.resource_version != "1"
    assert kube.requests == 3


def test_ctrl_c_ends_a_watch_at_once(ws: Workspace) -> None:
    """The informers' long watches are open when the researcher presses Ctrl-C; the command
    still ends at once, with one line and the shell's interrupt status."""
    idle_job(ws, "interrupted")
    watcher = ws.popen("run", "status", "interrupted", "--watch", "--interval", "1s")
    assert watcher.stdout is not None
    assert watcher.stdout.readline().startswith(f"watching {ws.namespace}/interrupted every 1s")
    time.sleep(2)  # the watches are open
    watcher.send_signal(signal.SIGINT)
    _out, err = watcher.communicate(timeout=10)
    assert watcher.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in err

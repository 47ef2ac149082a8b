"""The first-run walkthrough, verbatim, against the local control plane through a workspace
connection: validate → client dry-run → submit → status --watch → logs → list → cancel.

A CPU Job and an H200 GPU Job each go Submitted → admitted → scheduled on a node of the right
pool → Complete, and cancel gives the quota back.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from controller_harness import wait_for
from lifecycle_env import H200_PROFILE, Workspace, job_target, results_volume, workspace_setup
from real_node import CONTAINER_SECURITY

from hack.localcluster import LocalCluster
from hack.localcluster import fixtures as fx
from tau.cli.documents import RunHistory, RunList, RunResults, RunStatus


@pytest.fixture(scope="module")
def ws(
    local_cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Workspace]:
    yield from workspace_setup(local_cluster, tmp_path_factory.mktemp("lifecycle-first-run"))


def succeeded(ws: Workspace, name: str) -> dict | None:
    status = ws.tau("run", "status", name, "-o", "json")
    assert status.returncode == 0, status.stderr
    document = json.loads(status.stdout)
    return document if document["status"]["state"] == "succeeded" else None


def phases(document: dict) -> dict[str, str]:
    return {p["name"]: p["status"] for p in document["phases"]}


def test_first_run_walkthrough_cpu_job(ws: Workspace) -> None:
    ws.target("train", job_target("first-train"))

    validated = ws.tau("run", "validate", "--config", "tau/train.yaml")
    assert validated.returncode == 0, validated.stderr
    assert validated.stdout.strip() == "tau/train.yaml is valid"

    rendered = ws.tau("run", "train", "--dry-run=client")
    assert rendered.returncode == 0, rendered.stderr
    assert "kind: Job" in rendered.stdout
    assert f"namespace: {ws.namespace}" in rendered.stdout
    assert ws.get("job", "first-train", "-n", ws.namespace) is None  # nothing created

    submitted = ws.tau("run", "train")
    assert submitted.returncode == 0, submitted.stderr
    assert f"Job {ws.namespace}/first-train submitted" in submitted.stdout
    assert "tau run status first-train --watch" in submitted.stdout
    job = ws.get("job", "first-train", "-n", ws.namespace)
    assert job["metadata"]["labels"][fx.KUEUE_QUEUE_LABEL] == fx.CLUSTER_QUEUE
    assert job["metadata"]["annotations"]["tau.azure.com/submission-id"]

    # --watch stops once the workload is ready (or complete), exit 0.
    watched = ws.tau("run", "status", "first-train", "--watch", "--interval", "1s")
    assert watched.returncode == 0, watched.stderr
    assert "watching" in watched.stdout and "[x]  Ready" in watched.stdout

    document = wait_for("the Job to complete", lambda: succeeded(ws, "first-train"), timeout=60)
    assert document["kind"] == "RunStatus"
    assert document["apiVersion"] == "tau.azure.com/v1alpha1"
    assert document["status"]["state"] == "succeeded"
    assert document["status"]["workloadKind"] == "Job"
    assert phases(document) == {
        "Submitted": "done",
        "Kueue admission": "done",
        "Pod scheduling": "done",
        "DRA allocation": "skipped",
        "Image pull": "done",
        "Init containers": "skipped",
        "Container start": "done",
        "Ready": "done",
    }
    [pod] = document["pods"]
    assert pod["node"] in fx.CPU_NODES
    assert document["actions"][0]["name"] == "logs"

    logs = ws.tau("logs", "first-train")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.splitlines() == [fx.DEFAULT_POD_LOG_LINE]
    pod_name = pod["name"]
    prefixed = ws.tau("run", "logs", "first-train", "--prefix", "--timestamps", "-c", "main")
    assert prefixed.returncode == 0, prefixed.stderr
    [line] = prefixed.stdout.splitlines()
    assert line.startswith(f"[pod/{pod_name}/main] ")
    assert line.endswith(f"Z {fx.DEFAULT_POD_LOG_LINE}")  # kubelet timestamp, then the line
    assert ws.tau("run", "logs", "first-train", "--tail", "0").stdout == ""
    wrong = ws.tau("run", "logs", "first-train", "-c", "sidecar")
    assert wrong.returncode == 2 and '"sidecar" is not in pod' in wrong.stderr
    # Outside the repository, tau logs finds the run through the cached connection.
    elsewhere = ws.repo.parent / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    found = ws.tau("logs", "first-train", cwd=elsewhere)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines() == [fx.DEFAULT_POD_LOG_LINE]
    routed = ws.tau("logs", "first-train", "--workspace", ws.name, cwd=elsewhere)
    assert routed.returncode == 0, routed.stderr
    missing = ws.tau("logs", "no-such-run")
    assert missing.returncode == 1
    assert "nor in any cached workspace connection" in missing.stderr

    # A finished run has no live GPU telemetry: reported unavailable, never as zero.
    profiled = json.loads(
        ws.tau("run", "status", "first-train", "--run-profile", "-o", "json").stdout
    )
    assert profiled["metrics"]["gpuRuntime"]["available"] is False
    assert profiled["profile"][0]["value"].startswith("unavailable")

    # No storage.output on a PVC: get explains what it needs instead of guessing.
    results = ws.tau("run", "get", "first-train")
    assert results.returncode == 2
    assert "has no result annotations" in results.stderr and "--path and --pvc" in results.stderr
    escaped = ws.tau("run", "get", "first-train", "--artifact", "../../etc/passwd")
    assert escaped.returncode == 2 and "not a clean path inside the results" in escaped.stderr

    listed = ws.tau("run", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0] == "History: live-only"
    assert "first-train" in listed.stdout and "Complete" in listed.stdout


def test_gpu_job_lands_on_h200_and_cancel_releases_quota(ws: Workspace) -> None:
    body = job_target("gpu-train", profile=H200_PROFILE, gpus=8)
    body["compute"].update({"cpu_request": "4", "memory_request": "16Gi"})
    ws.target("gpu", body)
    submitted = ws.tau("run", "gpu")
    assert submitted.returncode == 0, submitted.stderr

    watched = ws.tau("run", "status", "gpu-train", "--watch", "--interval", "1s")
    assert watched.returncode == 0, watched.stderr
    document = wait_for("the GPU Job to complete", lambda: succeeded(ws, "gpu-train"), timeout=60)
    assert set(phases(document).values()) <= {"done", "skipped"}
    [workload] = document["workloads"]
    assert workload["flavors"] == [fx.GPU_FLAVOR_H200]
    [pod] = document["pods"]
    assert pod["node"] in fx.H200_POOL.node_names

    listed = json.loads(ws.tau("run", "list", "-o", "json").stdout)
    assert {"first-train", "gpu-train"} <= {run["name"] for run in listed["runs"]}
    assert listed["historyState"] == "live-only"

    for name in ("first-train", "gpu-train"):
        cancelled = ws.tau("run", "cancel", name)
        assert cancelled.returncode == 0, cancelled.stderr
        assert f'job.batch "{name}" deleted' in cancelled.stdout
        assert "compute released" in cancelled.stdout
        assert ws.get("job", name, "-n", ws.namespace) is None

    def queue_idle() -> bool:
        lq = ws.get("localqueues.kueue.x-k8s.io", fx.CLUSTER_QUEUE, "-n", ws.namespace) or {}
        st = lq.get("status") or {}
        usage = [
            r.get("total")
            for flavor in st.get("flavorsUsage") or []
            for r in flavor.get("resources") or []
        ]
        return st.get("admittedWorkloads") == 0 and all(u in (None, "0") for u in usage)

    wait_for("the workspace LocalQueue to release its quota", queue_idle, timeout=60)
    again = ws.tau("run", "list")
    assert "No jobs found" in again.stdout


def answer_reader_pods(ws: Workspace, tmp_path: Path, outputs: list[list[str]]) -> None:
    """Play the reader's part on KWOK: each new reader pod prints the next output.

    KWOK finishes a Job's pod about a second after it runs, so the pod's `Logs` object is
    created from a watch (not a kubectl poll) as soon as the job controller makes the pod.
    """
    from kubernetes import client, config, watch

    api = config.new_client_from_config(str(ws.cluster.kubeconfig))
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    ready = threading.Event()

    def serve() -> None:
        stream = watch.Watch()
        ready.set()
        for event in stream.stream(
            core.list_namespaced_pod, ws.namespace, label_selector="tau.azure.com/role=reader",
            timeout_seconds=120,
        ):  # fmt: skip
            pod = event["object"]
            if event["type"] != "ADDED" or pod.metadata.deletion_timestamp:
                continue
            name = pod.metadata.name
            log = tmp_path / f"{name}.log"
            lines = outputs.pop(0)
            log.write_text("".join(f"2026-01-01T00:00:00Z stdout F {x}\n" for x in lines))
            logs = {
                "apiVersion": "kwok.x-k8s.io/v1alpha1",
                "kind": "Logs",
                "metadata": {"name": name, "namespace": ws.namespace},
                "spec": {"logs": [{"containers": ["reader"], "logsFile": str(log)}]},
            }
            custom.create_namespaced_custom_object(
                "kwok.x-k8s.io", "v1alpha1", ws.namespace, "logs", logs
            )
            if not outputs:
                stream.stop()

    threading.Thread(target=serve, daemon=True).start()
    ready.wait(10)


def readers_left(ws: Workspace) -> list[str]:
    left = []
    for kind in ("jobs", "pods"):
        found = ws.get(kind, "-n", ws.namespace, "-l", "tau.azure.com/role=reader") or {}
        left += [
            f"{kind}/{o['metadata']['name']}"
            for o in found.get("items") or []
            if kind == "jobs" or not o["metadata"].get("deletionTimestamp")
        ]
    return left


def test_get_lists_and_fetches_results_through_a_read_only_reader_pod(
    ws: Workspace, tmp_path: Path
) -> None:
    claim = results_volume(ws, tmp_path)
    body = job_target("with-results", storage={"data_pvc": claim, "output": "/data/out/run-1"})
    ws.target("results", body)
    submitted = ws.tau("run", "results")
    assert submitted.returncode == 0, submitted.stderr
    job = ws.get("job", "with-results", "-n", ws.namespace)
    annotations = job["metadata"]["annotations"]
    assert annotations["tau.azure.com/result-path"] == "/data/out/run-1"
    assert annotations["tau.azure.com/result-pvc"] == claim

    # The reader lists the directory, then prints the file as base64 (`base64 FILE`).
    metrics = base64.b64encode(b'{"loss": 0.1}\n').decode()
    answer_reader_pods(ws, tmp_path, [["model/", "metrics.json"], [metrics]])
    listed = ws.tau("run", "get", "with-results")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[:6] == [
        "PATH: /data/out/run-1",
        f"PVC: {claim}",
        "(directory)",
        "ENTRIES:",
        "  model/",
        "  metrics.json",
    ]
    assert "Fetch one file with: tau run get with-results --artifact <NAME>" in listed.stdout
    raw = ws.tau("run", "get", "with-results", "--artifact", "metrics.json", "-o", "raw")
    assert raw.returncode == 0, raw.stderr
    assert raw.stdout == '{"loss": 0.1}\n'
    # The reader is a Job (the researcher role creates no bare pods); it goes with its pod.
    wait_for("the reader Jobs and their pods to go", lambda: not readers_left(ws), timeout=60)
    assert ws.tau("run", "cancel", "with-results").returncode == 0


def test_the_read_verbs_print_one_typed_document_as_json_and_yaml(
    ws: Workspace, tmp_path: Path
) -> None:
    claim = results_volume(ws, tmp_path, claim="read-docs")
    body = job_target("read-docs", storage={"data_pvc": claim, "output": "/data/out/docs"})
    ws.target("docs", body)
    submitted = ws.tau("run", "docs")
    assert submitted.returncode == 0, submitted.stderr
    wait_for("the Job to complete", lambda: succeeded(ws, "read-docs"), timeout=60)

    status = ws.document(RunStatus, "run", "status", "read-docs")
    assert (status["kind"], status["status"]["state"]) == ("RunStatus", "succeeded")
    history = ws.document(RunHistory, "run", "history", "read-docs")
    assert (history["found"], history["attempt"], history["entries"]) == (True, 1, [])
    listed = ws.document(RunList, "run", "list")
    assert "read-docs" in {run["name"] for run in listed["runs"]}
    answer_reader_pods(ws, tmp_path, [["metrics.json"], ["metrics.json"]])
    results = ws.document(RunResults, "run", "get", "read-docs")
    assert (results["pvc"], results["entries"]) == (claim, ["metrics.json"])

    wait_for("the reader Jobs and their pods to go", lambda: not readers_left(ws), timeout=60)
    assert ws.tau("run", "cancel", "read-docs").returncode == 0


def test_an_external_job_is_hidden_by_default_but_observable(ws: Workspace) -> None:
    external = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "external-job", "namespace": ws.namespace},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "work",
                            "image": "example.azurecr.io/tool:2",
                            # The workspace namespace enforces Pod Security restricted.
                            "securityContext": CONTAINER_SECURITY,
                        }
                    ],
                }
            },
        },
    }
    ws.cluster.apply([external])
    wait_for(
        "the external Job's pod",
        lambda: (ws.get("pods", "-n", ws.namespace, "-l", "job-name=external-job") or {}).get(
            "items"
        ),
        timeout=60,
    )
    assert "external-job" not in ws.tau("run", "list").stdout
    listed = ws.tau("run", "list", "--include-external")
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if "external-job" in line)
    assert row.split()[1] == "Job" and row.split()[-1] == "external"
    assert "SOURCE" in listed.stdout

    logs = ws.tau("logs", "external-job", "-c", "work", "--timestamps")
    assert logs.returncode == 0, logs.stderr
    assert logs.stdout.strip().endswith(fx.DEFAULT_POD_LOG_LINE)
    hints = ws.tau("run", "status", "external-job", "--diagnostic-hints")
    assert hints.returncode == 0, hints.stderr
    assert "Deep diagnostics (kubectl escape hatches):" in hints.stdout
    assert "'kubectl' '--context' 'research-cluster' '--kubeconfig'" in hints.stdout
    assert "Kueue admission" in hints.stdout  # no Workload: points at the queue label
    ws.kubectl("delete", "job", "external-job", "-n", ws.namespace, "--wait=false")


def test_unknown_run_is_reported_with_the_list_action(ws: Workspace, tmp_path: Path) -> None:
    result = ws.tau("run", "status", "no-such-run", "-o", "json")
    assert result.returncode == 1
    document = json.loads(result.stdout)
    assert document["status"]["state"] == "not_found"
    assert document["diagnostics"][0]["code"] == "RUN_NOT_FOUND"
    assert document["actions"][0]["command"]["argv"][:3] == ["tau", "run", "list"]


def test_the_first_run_dead_ends_are_gone(ws: Workspace) -> None:
    ws.target("train-dead-ends", job_target("dead-ends"))

    mistyped = ws.tau("run", "train-dead-endz")
    assert mistyped.returncode == 2
    assert 'did you mean "train-dead-ends"?' in mistyped.stderr

    server = ws.tau("run", "train-dead-ends", "--dry-run=server", "-o", "json")
    assert server.returncode == 0, server.stderr
    [job] = json.loads(server.stdout)
    assert job["kind"] == "Job" and job["metadata"]["uid"]  # what the API server answered
    assert ws.get("job", "dead-ends", "-n", ws.namespace) is None

    submitted = ws.tau("run", "train-dead-ends")
    assert submitted.returncode == 0, submitted.stderr
    assert "KUBECONFIG=" not in submitted.stdout
    route = f"--workspace {ws.name} --namespace {ws.namespace}"
    assert f"tau run status dead-ends --watch {route}" in submitted.stdout
    status = ws.tau("run", "status", "dead-ends", "-o", "json")
    assert status.returncode == 0, status.stderr
    document = json.loads(status.stdout)
    for action in document["actions"]:
        assert action["command"]["env"] == {}
        assert action["command"]["argv"][-4:] == route.split()
        assert not action["command"]["shell"].startswith("KUBECONFIG=")
    # The printed route reaches the run from outside the repository, as the researcher.
    elsewhere = ws.repo.parent / "elsewhere-dead-ends"
    elsewhere.mkdir(exist_ok=True)
    copied = ws.tau("run", "status", "dead-ends", *route.split(), "-o", "json", cwd=elsewhere)
    assert copied.returncode == 0, copied.stderr
    assert json.loads(copied.stdout)["status"]["found"] is True
    cancelled = ws.tau("run", "cancel", "dead-ends", *route.split(), cwd=elsewhere)
    assert cancelled.returncode == 0, cancelled.stderr

    missing = ws.tau(
        "workspace", "status", ws.name + "x", "--system-namespace", ws.system_namespace
    )
    assert missing.returncode == 1
    assert f'no TauWorkspace "{ws.name}x"' in missing.stderr
    assert f'did you mean "{ws.name}"?' in missing.stderr
    assert "you may not read" not in missing.stderr


# --- every hint tau prints is runnable by the researcher it addresses ------------------------


def printed_next(stdout: str) -> list[str]:
    """The commands under `Next:` after a submission."""
    lines = stdout.splitlines()
    return [line.strip() for line in lines[lines.index("Next:") + 1 :] if line.startswith("  ")]


def run_printed(ws: Workspace, argv: list[str]):
    """Run a printed `tau` command as the researcher; it must not be refused by RBAC."""
    assert argv[0] == "tau", argv
    result = ws.tau(*argv[1:])
    assert "authorization:" not in result.stderr, (argv, result.stderr)
    assert "forbidden" not in result.stderr.lower(), (argv, result.stderr)
    return result


def hold_queue(ws: Workspace, policy: str) -> None:
    """The platform operator holds/releases the workspace LocalQueue (admin kubeconfig)."""
    ws.kubectl(
        "patch", "localqueue", fx.CLUSTER_QUEUE, "-n", ws.namespace, "--type", "merge",
        "-p", json.dumps({"spec": {"stopPolicy": policy}}),
    )  # fmt: skip


def test_every_hint_after_submit_and_in_status_is_runnable_by_the_researcher(
    ws: Workspace, tmp_path: Path
) -> None:
    claim = results_volume(ws, tmp_path, "hint-results")
    body = job_target("hint-walk", storage={"data_pvc": claim, "output": "/data/out/hint-walk"})
    ws.target("hint-walk", body)
    submitted = ws.tau("run", "hint-walk")
    assert submitted.returncode == 0, submitted.stderr
    steps = printed_next(submitted.stdout)
    assert [s.split()[:3] for s in steps] == [
        ["tau", "run", "status"],
        ["tau", "logs", "hint-walk"],
        ["tau", "run", "get"],
        ["tau", "run", "cancel"],
    ]
    answer_reader_pods(ws, tmp_path, [["metrics.json"], ["metrics.json"]])
    for step in steps[:-1]:  # cancel last
        result = run_printed(ws, step.split())
        assert result.returncode == 0, (step, result.stderr)
    wait_for("the Job to complete", lambda: succeeded(ws, "hint-walk"), timeout=60)
    document = succeeded(ws, "hint-walk")
    assert [a["name"] for a in document["actions"]] == ["logs", "results"]
    for action in document["actions"]:
        result = run_printed(ws, action["command"]["argv"])
        assert result.returncode == 0, (action, result.stderr)
    wait_for("the reader Jobs and their pods to go", lambda: not readers_left(ws), timeout=60)
    cancelled = run_printed(ws, steps[-1].split())
    assert cancelled.returncode == 0, cancelled.stderr


def test_a_pending_and_a_failed_run_get_hints_the_researcher_can_run(ws: Workspace) -> None:
    ws.target("hint-fails", job_target("hint-fails"))
    hold_queue(ws, "Hold")
    try:
        submitted = ws.tau("run", "hint-fails")
        assert submitted.returncode == 0, submitted.stderr

        def pending() -> list[dict]:
            doc = json.loads(ws.tau("run", "status", "hint-fails", "-o", "json").stdout)
            return [d for d in doc["diagnostics"] if d["code"] == "KUEUE_PENDING"]

        [waiting] = wait_for("the run to wait for Kueue", pending, timeout=60)
        assert "platform operator" in waiting["suggestion"]
        [quota] = waiting["commands"]
        assert quota["argv"] == ["tau", "workspace", "quota", "show", ws.name]
        shown = run_printed(ws, quota["argv"])
        assert shown.returncode == 0, shown.stderr
        assert f"ClusterQueue: {fx.CLUSTER_QUEUE}" in shown.stdout
        stamp = {"metadata": {"annotations": {fx.POD_OUTCOME_ANNOTATION: fx.OUTCOME_FAIL}}}
        ws.kubectl(
            "patch", "job", "hint-fails", "-n", ws.namespace, "--type", "merge",
            "-p", json.dumps({"spec": {"template": stamp}}),
        )  # fmt: skip
    finally:
        hold_queue(ws, "None")

    def failed() -> dict | None:
        doc = json.loads(ws.tau("run", "status", "hint-fails", "-o", "json").stdout)
        return doc if doc["status"]["state"] == "failed" else None

    document = wait_for("the run to fail", failed, timeout=90)
    assert [a["name"] for a in document["actions"]] == ["logs", "diagnostics"]
    for action in document["actions"]:
        result = run_printed(ws, action["command"]["argv"])
        assert result.returncode == 0, (action, result.stderr)
    # resume refuses a crash and names what to do instead: each of those commands runs.
    resumed = ws.tau("run", "resume", "hint-fails", "--config", "tau/hint-fails.yaml")
    assert resumed.returncode == 1
    named = [c.strip("`").split() for c in resumed.stderr.split("`")[1::2]]
    assert ["tau", "run", "logs", "hint-fails"] in named
    assert ["tau", "run", "cancel", "hint-fails"] in named
    for argv in named:
        result = run_printed(ws, argv)
        assert result.returncode == 0, (argv, result.stderr)


def test_a_denial_names_what_is_missing_not_the_role_the_researcher_holds(ws: Workspace) -> None:
    """Another namespace is outside the workspace binding: the line says so, and who decides."""
    denied = ws.tau("run", "list", "-n", "kube-system")
    assert denied.returncode == 1
    assert "authorization:" in denied.stderr
    assert "ask the platform operator for the workspace role" not in denied.stderr
    assert "platform operator" in denied.stderr


# --- Pod Security: tau renders for the level a workspace enforces, and passes warnings on ---


def pod_security(ws: Workspace) -> str:
    obj = ws.get("workspaces.tau.azure.com", ws.name, "-n", ws.system_namespace) or {}
    return ((obj.get("status") or {}).get("target") or {}).get("podSecurity", "")


def enforce(ws: Workspace, level: str) -> None:
    """The platform operator sets the namespace's level (the controller keeps the label) and
    nudges the workspace so its status publishes it."""
    ws.kubectl(
        "label", "namespace", ws.namespace, "--overwrite",
        f"pod-security.kubernetes.io/enforce={level}",
    )  # fmt: skip
    ws.kubectl(
        "annotate", "workspaces.tau.azure.com", ws.name, "-n", ws.system_namespace,
        "--overwrite", f"e2e/pod-security={level}",
    )  # fmt: skip
    wait_for(f"status podSecurity {level}", lambda: pod_security(ws) == level, 60)


def test_a_default_workspace_is_restricted_and_its_runs_pass_without_a_warning(
    ws: Workspace,
) -> None:
    labels = ws.get("namespace", ws.namespace)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"  # the default
    assert labels["pod-security.kubernetes.io/warn"] == "restricted"
    assert pod_security(ws) == "restricted"
    ws.target("restricted", job_target("restricted-run"))
    checked = ws.tau("run", "restricted", "--dry-run=server")
    assert checked.returncode == 0, checked.stderr
    assert "PodSecurity" not in checked.stderr, checked.stderr
    rendered = ws.tau("run", "restricted", "--dry-run=client")
    assert "runAsNonRoot: true" in rendered.stdout
    assert "allowPrivilegeEscalation: false" in rendered.stdout
    submitted = ws.tau("run", "restricted")
    assert submitted.returncode == 0, submitted.stderr
    assert "PodSecurity" not in submitted.stderr, submitted.stderr
    wait_for("the restricted run to complete", lambda: succeeded(ws, "restricted-run"), 60)
    assert ws.tau("run", "cancel", "restricted-run").returncode == 0


def test_pod_security_warnings_are_passed_on_at_submit_one_line_each(ws: Workspace) -> None:
    """A platform that lowers the level to baseline gets plain pods; the API server's
    restricted-level warnings (the namespace warns at restricted) reach the researcher, one
    line each."""
    enforce(ws, "baseline")
    try:
        ws.target("warned", job_target("warned-run"))
        submitted = ws.tau("run", "warned")
        assert submitted.returncode == 0, submitted.stderr
        warned = [line for line in submitted.stderr.splitlines() if "PodSecurity" in line]
        assert warned, submitted.stderr
        for line in warned:
            assert line.startswith('warning: API server: would violate PodSecurity "restricted')
        assert ws.tau("run", "cancel", "warned-run").returncode == 0
    finally:
        enforce(ws, "restricted")

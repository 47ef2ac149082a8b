"""The PVC transport: helper-pod scripts run by busybox standing in for the kubelet.

Each helper pod's own command and environment run unchanged against a temporary directory
(only `TAU_DATA_DIR`, the PVC mount, points elsewhere) with nothing on PATH but busybox's
applets (the helper image is busybox), so the snapshot, journal, precondition and proof
logic are exercised for real; the live-cluster e2e runs the same pods on a kubelet node.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tau import keys
from tau.data import datasets, layout, models
from tau.data.podroot import PodRoot, helper_job
from tau.data.root import Scope
from tau.errors import RuntimeFailure, UsageError

CLOCK = "2026-07-16T10:00:00Z"


BUSYBOX = Path("/bin/busybox")


@pytest.fixture(scope="session", autouse=True)
def applets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PATH of busybox applets only: a script using anything else fails here."""
    assert BUSYBOX.exists(), "the helper-pod scripts are tested with busybox (busybox-static)"
    directory = tmp_path_factory.mktemp("busybox")
    names = subprocess.run([str(BUSYBOX), "--list"], capture_output=True, text=True, check=True)
    for name in names.stdout.split():
        (directory / name).symlink_to(BUSYBOX)
    LocalPods.path = str(directory)
    return directory


class LocalPods(PodRoot):
    """A PodRoot whose helper Jobs' pods run as local processes over `data`."""

    path = ""

    def __init__(self, data: Path, scope: tuple[Scope, ...]) -> None:
        self.data = data
        self.pods: list[dict[str, Any]] = []
        super().__init__(None, "research", "training-data", scope)  # type: ignore[arg-type]

    def _check_claim(self) -> None:
        pass

    def _execute(self, job: dict[str, Any], timeout: float) -> tuple[str, list[str]]:
        pod = job["spec"]["template"]
        self.pods.append(pod)
        container = pod["spec"]["containers"][0]
        env = {e["name"]: e["value"] for e in container["env"]}
        env[keys.ENV_DATA_DIR] = str(self.data)
        env["PATH"] = self.path
        done = subprocess.run(
            container["command"], env=env, capture_output=True, text=True, timeout=60
        )
        return ("Succeeded" if done.returncode == 0 else "Failed"), done.stdout.splitlines()

    def roles(self) -> list[str]:
        return [p["metadata"]["labels"][keys.ROLE] for p in self.pods]


def clock() -> str:
    return CLOCK


def shards(data: Path, where: str = "uploads/mnist") -> None:
    for rel, body in {"train/a.bin": b"\x01\x00", "val/b.bin": b"\x02\x00\x03\x00"}.items():
        path = data / where / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)


def register(data: Path, version: str = "1") -> LocalPods:
    root = LocalPods(data, datasets.SCOPE)
    reg = datasets.Registration(
        "mnist", version, "eval", datasets.scan(root, "uploads/mnist"), "verified", "uploads/mnist"
    )
    datasets.register(root, datasets.build(reg, clock))
    return root


def test_register_reads_once_hashes_once_and_writes_once(tmp_path: Path) -> None:
    shards(tmp_path)
    root = register(tmp_path)
    assert root.roles() == ["registry-read", "registry-scan", "registry-write"]
    record = json.loads((tmp_path / layout.dataset_record("mnist", "1")).read_text())
    assert [(f["path"], f["bytes"]) for f in record["files"]] == [
        ("train/a.bin", 2),
        ("val/b.bin", 4),
    ]
    read, scan, write = root.pods
    assert read["spec"]["volumes"][0]["persistentVolumeClaim"] == {
        "claimName": "training-data",
        "readOnly": True,
    }
    assert scan["spec"]["containers"][0]["volumeMounts"][0]["readOnly"] is True
    assert write["spec"]["containers"][0]["volumeMounts"][0]["readOnly"] is False


def test_a_record_created_after_the_snapshot_is_not_overwritten(tmp_path: Path) -> None:
    shards(tmp_path)
    root = LocalPods(tmp_path, datasets.SCOPE)
    reg = datasets.Registration(
        "mnist", "1", "eval", datasets.scan(root, "uploads/mnist"), "verified", "uploads/mnist"
    )
    register(tmp_path)  # someone else registers mnist@1 after `root` took its snapshot
    theirs = (tmp_path / layout.dataset_record("mnist", "1")).read_bytes()
    with pytest.raises(UsageError, match="mnist@1 already exists; datasets are immutable"):
        datasets.register(root, datasets.build(reg, lambda: "2030-01-01T00:00:00Z"))
    assert (tmp_path / layout.dataset_record("mnist", "1")).read_bytes() == theirs


def test_a_compare_and_swap_alias_fails_if_it_moved_after_the_snapshot(tmp_path: Path) -> None:
    shards(tmp_path)
    register(tmp_path, "1")
    register(tmp_path, "2")
    datasets.set_alias(LocalPods(tmp_path, datasets.SCOPE), "mnist", "latest", "1", clock=clock)
    stale = LocalPods(tmp_path, datasets.SCOPE)
    datasets.set_alias(LocalPods(tmp_path, datasets.SCOPE), "mnist", "latest", "2", clock=clock)
    with pytest.raises(RuntimeFailure, match="was moved by someone else"):
        datasets.set_alias(stale, "mnist", "latest", "1", expect="1", clock=clock)
    assert datasets.get_alias(LocalPods(tmp_path, datasets.SCOPE), "mnist", "latest").version == "2"


def test_verify_and_ingest_move_and_check_bytes_in_pods(tmp_path: Path) -> None:
    shards(tmp_path)
    register(tmp_path)
    root = LocalPods(tmp_path, datasets.SCOPE)
    assert datasets.verify(root, "mnist", "1")["ok"] is True
    files = datasets.get(root, "mnist", "1").files
    reg = datasets.Registration(
        "mnist", "2", "eval", files, "manifest-supplied", layout.dataset_bytes("mnist", "2")
    )
    datasets.register(root, datasets.build(reg, clock))
    ingesting = LocalPods(tmp_path, datasets.SCOPE)
    state = datasets.ingest(ingesting, "mnist", "2", "uploads/mnist", clock=clock)
    assert state.state == "ready"
    assert (tmp_path / "datasets/mnist/2/val/b.bin").read_bytes() == b"\x02\x00\x03\x00"
    # the `ingesting` status lands before the copy pod starts, the final one after it
    assert ingesting.roles() == [
        "registry-read",
        "registry-write",
        "registry-copy",
        "registry-write",
    ]
    assert datasets.status(LocalPods(tmp_path, datasets.SCOPE), "mnist", "2").state == "ready"


def test_a_missing_scan_directory_is_a_usage_error(tmp_path: Path) -> None:
    root = LocalPods(tmp_path, datasets.SCOPE)
    with pytest.raises(UsageError, match="--from /data/nowhere: no such directory"):
        datasets.scan(root, "nowhere")


def test_rebuild_snapshots_only_the_small_records_of_run_directories(tmp_path: Path) -> None:
    run = tmp_path / "checkpoints/finetunes/run-a"
    run.mkdir(parents=True)
    (run / "metrics.json").write_text(json.dumps({"loss": 0.5}))
    (run / "last.safetensors").write_bytes(b"\0" * 4096)
    root = LocalPods(tmp_path, models.REBUILD_SCOPE)
    assert not (root.local.directory / "checkpoints/finetunes/run-a/last.safetensors").exists()
    rows, _ = models.rebuild(root, model="demo", clock=clock)
    assert [r.run for r in rows] == ["run-a"]
    best = models.best(LocalPods(tmp_path, models.SCOPE), "demo")
    assert best.run == "run-a" and best.primary_metric.value == 0.5


def test_reading_outside_the_verb_scope_is_a_programming_error(tmp_path: Path) -> None:
    root = LocalPods(tmp_path, datasets.SCOPE)
    with pytest.raises(AssertionError, match="outside this verb's registry scope"):
        root.read(layout.model_run("demo", "run-a"))


def test_helper_jobs_run_one_restricted_pod_that_carries_no_credentials() -> None:
    job = helper_job("research", "training-data", "write", "true", [], [], 120, True)
    assert job["kind"] == "Job" and job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]
    spec = pod["spec"]
    assert spec["automountServiceAccountToken"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True
    container = spec["containers"][0]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }
    assert pod["metadata"]["labels"][keys.MANAGED_BY] == "tau"
    assert spec["activeDeadlineSeconds"] == 120


@pytest.mark.parametrize("writable", [False, True])
def test_helper_jobs_are_valid_kubernetes_jobs(writable: bool) -> None:
    from tests.unit.render.schema import validate

    validate(helper_job("research", "training-data", "copy", "true", ["a"], [], 3600, writable))


def test_the_platform_can_mirror_the_image_and_place_helper_pods(monkeypatch) -> None:
    monkeypatch.setenv(keys.ENV_HELPER_IMAGE, "registry.local/busybox:1.36.1")
    monkeypatch.setenv(keys.ENV_HELPER_NODE_SELECTOR, "agentpool=real,type=real")
    monkeypatch.setenv(
        keys.ENV_HELPER_TOLERATIONS, "tau.azure.com/real-node=true:NoSchedule,x:NoExecute"
    )
    job = helper_job("research", "training-data", "read", "true", [], [], 120, False)
    spec = job["spec"]["template"]["spec"]
    assert spec["containers"][0]["image"] == "registry.local/busybox:1.36.1"
    assert spec["nodeSelector"] == {"agentpool": "real", "type": "real"}
    assert spec["tolerations"] == [
        {
            "key": "tau.azure.com/real-node",
            "operator": "Equal",
            "effect": "NoSchedule",
            "value": "true",
        },
        {"key": "x", "operator": "Exists", "effect": "NoExecute"},
    ]
    monkeypatch.setenv(keys.ENV_HELPER_NODE_SELECTOR, "novalue")
    with pytest.raises(UsageError, match="TAU_HELPER_NODE_SELECTOR: 'novalue' is not key=value"):
        helper_job("research", "training-data", "read", "true", [], [], 120, False)

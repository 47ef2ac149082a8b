"""Result paths: requested artifacts stay inside the results; the reader Job only reads."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tau.errors import RuntimeFailure, UsageError
from tau.lifecycle.artifacts import decoded, inside, is_directory, mount_point, reader_job

BUSYBOX = Path("/bin/busybox")


def test_a_relative_artifact_joins_the_result_path():
    assert inside("/data/out/run-1", "metrics/final.json") == "/data/out/run-1/metrics/final.json"


@pytest.mark.parametrize(
    "escape", ["../x", "../../etc/passwd", "/etc/passwd", "a/../../b", "a/./b", "", ".."]
)
def test_escaping_or_unclean_artifacts_are_refused(escape):
    with pytest.raises(UsageError):
        inside("/data/out/run-1", escape)


def test_directory_heuristic():
    assert is_directory("/data/out/run-1")
    assert is_directory("/data/out/run.v1/")
    assert not is_directory("/data/out/model.safetensors")


def pod_of(job):
    return job["spec"]["template"]


def test_the_reader_is_a_job_kueue_leaves_alone_that_runs_once_and_cleans_up():
    """A Job, not a bare pod: the researcher role creates Jobs but deliberately not pods."""
    job = reader_job("research", "blob-training", "/data", 'ls -1Ap -- "$1"', "/data/out")
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert "kueue.x-k8s.io/queue-name" not in job["metadata"]["labels"]
    assert job["spec"]["backoffLimit"] == 0
    assert job["spec"]["ttlSecondsAfterFinished"] > 0
    assert pod_of(job)["metadata"]["labels"]["tau.azure.com/role"] == "reader"


def test_the_reader_pod_mounts_the_claim_read_only_and_runs_restricted():
    pod = pod_of(reader_job("research", "blob-training", "/data", 'ls -1Ap -- "$1"', "/data/out"))
    [container] = pod["spec"]["containers"]
    assert container["volumeMounts"] == [
        {"name": "results", "mountPath": "/data", "readOnly": True}
    ]
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"] == {
        "claimName": "blob-training",
        "readOnly": True,
    }
    assert container["command"][-1] == "/data/out"  # the path is an argument, never shell text
    assert container["securityContext"]["runAsNonRoot"] is True
    assert pod["spec"]["automountServiceAccountToken"] is False
    assert mount_point("/data/checkpoints/x") == "/data"


def test_the_reader_pod_is_placed_like_every_helper_pod(monkeypatch):
    """A registry mirror and a dedicated pool: the platform's TAU_HELPER_* knobs apply."""
    monkeypatch.setenv("TAU_HELPER_IMAGE", "registry.example.com/busybox:1.36.1")
    monkeypatch.setenv("TAU_HELPER_NODE_SELECTOR", "agentpool=system")
    monkeypatch.setenv("TAU_HELPER_TOLERATIONS", "tau.azure.com/real-node:NoSchedule")
    pod = pod_of(reader_job("research", "blob-training", "/data", 'cat -- "$1"', "/data/out/x"))
    assert pod["spec"]["containers"][0]["image"] == "registry.example.com/busybox:1.36.1"
    assert pod["spec"]["nodeSelector"] == {"agentpool": "system"}
    assert pod["spec"]["tolerations"] == [
        {"key": "tau.azure.com/real-node", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_a_fetched_file_keeps_its_exact_bytes_through_the_line_based_pod_log(tmp_path):
    """The reader's script run by busybox (the helper image); its log read as lines."""
    artifact = tmp_path / "result.txt"
    artifact.write_bytes("tau kind job smoke complete\n\nü\n".encode())
    pod = pod_of(reader_job("research", "blob-training", "/data", 'base64 "$1"', str(artifact)))
    assert pod["spec"]["containers"][0]["command"][:3] == ["sh", "-c", 'base64 "$1"']
    [*_, script, arg0, path] = pod["spec"]["containers"][0]["command"]
    printed = subprocess.run(
        [str(BUSYBOX), "sh", "-c", script, arg0, path], capture_output=True, text=True, check=True
    ).stdout
    lines = printed.splitlines()  # what pod_log yields
    assert decoded("\n".join(lines), str(artifact)) == "tau kind job smoke complete\n\nü\n"


def test_a_reader_that_prints_no_base64_is_one_line_for_the_platform_operator():
    with pytest.raises(RuntimeFailure) as failure:
        decoded("sh: base64: not found", "/data/out/result.txt")
    assert str(failure.value) == "the reader's output for /data/out/result.txt is not base64"
    assert failure.value.owner == "platform operator"

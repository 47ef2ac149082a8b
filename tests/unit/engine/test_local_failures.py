"""Failing targets: classification, retry only for listed reasons, backoff env, GPU refusal."""

from __future__ import annotations

import json
import os
import stat

from tests.unit.engine.conftest import project, run_name

# Attempt 1 is killed by SIGKILL (what the kernel OOM killer sends); later attempts record
# their retry env and succeed.
OOM_ONCE = """\
import json, os, signal
from pathlib import Path

out = Path(os.environ["TAU_OUTPUT_DIR"])
out.mkdir(parents=True, exist_ok=True)
names = ("TAU_RETRY_ATTEMPT", "TAU_RETRY_MAX", "TAU_RETRY_REASON", "TAU_RESUME_FROM")
seen = {n: os.environ.get(n) for n in names}
attempt = int(os.environ.get("TAU_RETRY_ATTEMPT", "0"))
(out / f"env-{attempt}.json").write_text(json.dumps(seen))
if attempt < int(os.environ.get("FAIL_TIMES", "1")):
    os.kill(os.getpid(), signal.SIGKILL)
print("recovered")
"""


def config(name: str, resilience: str = "", extra: str = "", gpus: int = 0) -> str:
    return f"""\
name: {name}
engine: job
entrypoint: ../job.py
compute:
  gpus: {gpus}
runtime:
  image: python:3.12-slim
{extra}
{resilience}
"""


def test_a_failing_target_exits_non_zero_as_unknown_and_is_never_retried(local, tmp_path):
    resilience = "resilience:\n  max_retries: 3\n  retry_on: [OOMKilled]\n  backoff_initial: 10ms\n"
    repo = project(
        tmp_path / "repo", "fail", config("fail", resilience), {"job.py": "raise SystemExit(3)\n"}
    )
    result = local.tau("run", "fail", "--local", cwd=repo)
    assert result.returncode == 1
    name = run_name(result.stderr)
    assert f"local run {name} failed (Unknown)" in result.stderr
    record = local.record(name)
    assert len(record["attempts"]) == 1 and record["attempts"][0]["exit_code"] == 3
    doc = local.status(name, cwd=repo)
    assert doc["status"]["state"] == "failed" and doc["status"]["startupFailed"] is True
    assert doc["phases"][-1]["name"] == "Failed"
    assert doc["diagnostics"][0]["code"] == "RUN_FAILED"
    resumed = local.tau("run", "resume", name, "-c", "tau/fail.yaml", cwd=repo)
    assert resumed.returncode == 2
    assert "non-retryable reason Unknown" in resumed.stderr


def test_oom_kill_is_retried_with_the_retry_env_only_when_listed(local, tmp_path):
    resilience = (
        "resilience:\n  max_retries: 2\n  retry_on: [OOMKilled]\n"
        "  backoff_initial: 50ms\n  backoff_max: 1s\n"
    )
    repo = project(tmp_path / "repo", "oom", config("oom", resilience), {"job.py": OOM_ONCE})
    result = local.tau("run", "oom", "--local", cwd=repo)
    assert result.returncode == 0, result.stderr
    name = run_name(result.stderr)
    assert "attempt 1/2 failed (OOMKilled) — retrying in 0.05s" in result.stderr
    output = local.data / "checkpoints" / "workflows" / name
    first = json.loads((output / "env-0.json").read_text())
    assert set(first.values()) == {None}  # the first attempt sees no retry env
    second = json.loads((output / "env-1.json").read_text())
    assert second == {
        "TAU_RETRY_ATTEMPT": "1",
        "TAU_RETRY_MAX": "2",
        "TAU_RETRY_REASON": "OOMKilled",
        "TAU_RESUME_FROM": str(local.data / "checkpoints" / "finetunes" / name),
    }
    attempts = local.record(name)["attempts"]
    assert [a["reason"] for a in attempts] == ["OOMKilled", "Completed"]
    assert attempts[0]["signal"] == 9


def test_history_of_a_local_run_lists_its_retry_and_resume_without_a_cluster(local, tmp_path):
    resilience = "resilience:\n  max_retries: 1\n  retry_on: [OOMKilled]\n  backoff_initial: 10ms\n"
    extra = "  env:\n    FAIL_TIMES: '2'"
    repo = project(tmp_path / "repo", "oom", config("oom", resilience, extra), {"job.py": OOM_ONCE})
    local.env["KUBECONFIG"] = str(tmp_path / "no-kubeconfig")
    first = local.tau("run", "oom", "--local", cwd=repo)
    assert first.returncode == 1
    name = run_name(first.stderr)
    (repo / "tau" / "oom.yaml").write_text(config("oom", resilience, "  env:\n    FAIL_TIMES: '0'"))
    resumed = local.tau("run", "resume", name, "-c", "tau/oom.yaml", "--force", cwd=repo)
    assert resumed.returncode == 0, resumed.stderr
    shown = local.tau("run", "history", name, cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "State: Complete (attempt 3)" in shown.stdout
    data = json.loads(local.tau("run", "history", name, "-o", "json", cwd=repo).stdout)
    assert data["namespace"] == "local" and data["state"] == "succeeded"
    assert [(e["event"], e["attempt"], e["failure"]) for e in data["entries"]] == [
        ("retry", "2", "OOMKilled"),
        ("resume", "3", "OOMKilled"),
    ]


def test_oom_kill_is_not_retried_when_retry_on_keeps_the_default(local, tmp_path):
    resilience = "resilience:\n  max_retries: 2\n  backoff_initial: 10ms\n"
    repo = project(tmp_path / "repo", "oom", config("oom", resilience), {"job.py": OOM_ONCE})
    result = local.tau("run", "oom", "--local", cwd=repo)
    assert result.returncode == 1
    assert "failed (OOMKilled) — not in retry_on list [Preempted, Evicted]" in result.stderr
    assert len(local.record(run_name(result.stderr))["attempts"]) == 1


def test_retries_are_bounded_by_max_retries(local, tmp_path):
    resilience = "resilience:\n  max_retries: 1\n  retry_on: [oomkilled]\n  backoff_initial: 10ms\n"
    extra = "  env:\n    FAIL_TIMES: '99'"
    repo = project(tmp_path / "repo", "oom", config("oom", resilience, extra), {"job.py": OOM_ONCE})
    result = local.tau("run", "oom", "--local", cwd=repo)
    assert result.returncode == 1
    name = run_name(result.stderr)
    assert f"local run {name} exhausted all 1 retries" in result.stderr
    assert len(local.record(name)["attempts"]) == 2


def test_resume_after_oom_needs_force_and_passes_the_checkpoint(local, tmp_path):
    extra = "  env:\n    FAIL_TIMES: '1'"
    repo = project(tmp_path / "repo", "oom", config("oom", "", extra), {"job.py": OOM_ONCE})
    first = local.tau("run", "oom", "--local", cwd=repo)
    assert first.returncode == 1
    name = run_name(first.stderr)
    refused = local.tau("run", "resume", name, "-c", "tau/oom.yaml", cwd=repo)
    assert refused.returncode == 2 and "resume with --force" in refused.stderr
    (repo / "tau" / "oom.yaml").write_text(config("oom", "", "  env:\n    FAIL_TIMES: '0'"))
    resumed = local.tau(
        "run", "resume", name, "-c", "tau/oom.yaml", "--force", "--from", "/data/ckpt", cwd=repo
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "warning: config hash changed" in resumed.stderr
    output = local.data / "checkpoints" / "workflows" / name
    seen = json.loads((output / "env-0.json").read_text())
    assert seen["TAU_RESUME_FROM"] == str(local.data / "ckpt")
    assert len(local.record(name)["attempts"]) == 2
    assert local.status(name, cwd=repo)["status"]["state"] == "succeeded"


MARKER = """\
from pathlib import Path
Path(__file__).with_name("started").write_text("yes")
"""


def test_a_target_needing_8_gpus_is_refused_before_anything_starts(local, tmp_path):
    repo = project(tmp_path / "repo", "big", config("big", gpus=8), {"job.py": MARKER})
    result = local.tau("run", "big", "--local", cwd=repo)
    assert result.returncode == 1
    assert "tau/big.yaml needs 8 GPU(s) (compute.gpus) but this machine has 0" in result.stderr
    assert "short by 8" in result.stderr
    assert not (repo / "started").exists()
    assert local.runs() == []


def test_the_gpu_shortfall_counts_what_nvidia_smi_reports(local, tmp_path):
    tools = tmp_path / "bin"
    tools.mkdir()
    smi = tools / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA A100'\necho 'NVIDIA A100'\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    local.env["PATH"] = f"{tools}{os.pathsep}{local.env['PATH']}"
    repo = project(tmp_path / "repo", "big", config("big", gpus=8), {"job.py": MARKER})
    result = local.tau("run", "big", "--local", cwd=repo)
    assert result.returncode == 1
    assert "but this machine has 2 (2 GPU(s) via nvidia-smi); short by 6" in result.stderr


def test_missing_runtime_pip_packages_are_listed_not_installed(local, tmp_path):
    extra = "  pip:\n    - pyyaml\n    - tau-surely-not-installed==1.0"
    rayjob = config("pip", extra=extra).replace("engine: job", "engine: rayjob")
    rayjob = rayjob.replace("compute:\n  gpus: 0", "compute:\n  workers: 1\n  gpus_per_worker: 0")
    repo = project(tmp_path / "repo", "pip", rayjob, {"job.py": MARKER})
    result = local.tau("run", "pip", "--local", cwd=repo)
    assert result.returncode == 1
    assert "missing from this Python environment: tau-surely-not-installed==1.0" in result.stderr
    assert "pyyaml" not in result.stderr.split("missing from")[1].split("(")[0]
    assert not (repo / "started").exists()

"""`tau python build|submit|submit-build|inspect`: the build artifact, its rendering through
`tau run --config`, the in-pod trainer, and staged train → eval submission."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tau.errors import UsageError
from tau.sdk.build import Overrides, build, read_build
from tau.sdk.submit import submit_build
from tests.unit.render.kuberay import pruned_fields, rayjob_schema, rayjob_validator

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples/sdk-workflow/workflow.py"
# An interpreter with PyYAML but without TauGrid, like a workload image.
BARE_PYTHON = Path("/usr/bin/python3")


def tau(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau", *args], capture_output=True, text=True, check=False, **kwargs
    )


def files(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_the_build_is_byte_stable_and_holds_no_absolute_paths(tmp_path: Path) -> None:
    build(EXAMPLE, tmp_path / "a")
    build(EXAMPLE, tmp_path / "b")
    first, second = files(tmp_path / "a"), files(tmp_path / "b")
    assert first == second
    assert sorted(first) == [
        "build.json",
        "ranker-eval/ranker-eval.yaml",
        "ranker-eval/tau_ctx.py",
        "ranker-eval/tau_keys.py",
        "ranker-eval/tau_user_module.py",
        "ranker-eval/train.py",
        "ranker-train/ranker-train.yaml",
        "ranker-train/tau_ctx.py",
        "ranker-train/tau_keys.py",
        "ranker-train/tau_user_module.py",
        "ranker-train/train.py",
    ]
    assert not any(str(tmp_path).encode() in body for body in first.values())
    artifact = read_build(tmp_path / "a")
    assert artifact["kind"] == "tau.python.build" and artifact["generator"]["name"] == "tau-py"
    assert [(w["kind"], w["name"], w["after"]) for w in artifact["workloads"]] == [
        ("train", "ranker-train", None),
        ("eval", "ranker-eval", "ranker-train"),
    ]
    assert artifact["workloads"][1]["upstream_checkpoint"] == (
        "/data/checkpoints/finetunes/ranker-train/artifacts/last.safetensors"
    )


def test_build_overrides_reach_the_manifests(tmp_path: Path) -> None:
    build(EXAMPLE, tmp_path, Overrides(namespace="research", queue="lq", data_pvc="other"))
    manifest = yaml.safe_load((tmp_path / "ranker-train/ranker-train.yaml").read_text())
    assert manifest["policy"] == {"namespace": "research", "queue": "lq"}
    assert manifest["storage"]["data_pvc"] == "other"


def test_a_built_manifest_renders_through_tau_run_as_a_valid_rayjob(tmp_path: Path) -> None:
    build(EXAMPLE, tmp_path)
    result = tau("run", "--config", str(tmp_path / "ranker-train/ranker-train.yaml"),
                 "-n", "research", "--dry-run=client", "-o", "json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    (rayjob,) = json.loads(result.stdout)
    assert rayjob["metadata"]["name"] == "tau-ranker-train"
    assert [e.message for e in rayjob_validator().iter_errors(rayjob)] == []
    assert pruned_fields(rayjob, rayjob_schema()) == []


def test_the_generated_trainer_runs_without_taugrid_installed(tmp_path: Path) -> None:
    """What the pod does: `/script/train.py --manifest ...`, in an image without `tau`."""
    assert BARE_PYTHON.exists(), "the stand-in test needs a Python without TauGrid"
    bare = {"PATH": os.environ["PATH"]}
    probe = [str(BARE_PYTHON), "-c"]
    run = {"env": bare, "cwd": tmp_path, "check": False, "capture_output": True}
    assert subprocess.run([*probe, "import yaml"], **run).returncode == 0
    no_tau = subprocess.run([*probe, "import tau"], **run)
    assert no_tau.returncode != 0
    build(EXAMPLE, tmp_path / "build")
    script = tmp_path / "build/ranker-train"
    out = tmp_path / "run"
    env = {**bare, "TAU_OUTPUT_DIR": str(out), "TAU_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [str(BARE_PYTHON), "train.py", "--manifest", "ranker-train.yaml", "--smoke-pairs", "0"],
        cwd=script, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "step=0" in done.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["loss"] < 0.01
    record = json.loads((out / "model.json").read_text())
    assert (record["model"], record["run"], record["primary_metric"]["name"]) == (
        "ranker",
        "ranker-train",
        "loss",
    )
    assert json.loads((out / "artifacts/last.safetensors").read_text())["weights"]


def fake_tau(tmp_path: Path, states: list[str]) -> Path:
    """A `tau` that records its arguments and reports the given run states in turn."""
    log = tmp_path / "calls.jsonl"
    script = tmp_path / "tau"
    script.write_text(
        f"""#!{sys.executable}
import json, sys
with open({str(log)!r}, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["run", "status"]:
    states = {states!r}
    seen = sum(1 for line in open({str(log)!r}) if '"status"' in line)
    print(json.dumps({{"status": {{"state": states[min(seen, len(states)) - 1]}}}}))
"""
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def calls(tmp_path: Path) -> list[list[str]]:
    return [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]


def test_an_eval_is_submitted_only_after_its_train_succeeded(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TAU_BINARY", str(fake_tau(tmp_path, ["running", "succeeded"])))
    monkeypatch.delenv("TAU_DATA_DIR", raising=False)
    build(EXAMPLE, tmp_path / "build")
    assert (
        submit_build(tmp_path / "build", context="ctx", say=lambda _: None, sleep=lambda _: None)
        == 0
    )
    made = calls(tmp_path)
    assert [c[:2] for c in made] == [["run", "--config"], ["run", "status"], ["run", "status"],
                                     ["run", "--config"]]  # fmt: skip
    assert made[0][2].endswith("ranker-train/ranker-train.yaml")
    assert made[1][2] == "tau-ranker-train"
    assert made[-1][2].endswith("ranker-eval/ranker-eval.yaml")
    assert made[0][-2:] == ["--context", "ctx"]


def test_a_failed_train_stops_its_evals(tmp_path, monkeypatch) -> None:
    from tau.errors import RuntimeFailure

    monkeypatch.setenv("TAU_BINARY", str(fake_tau(tmp_path, ["failed"])))
    monkeypatch.delenv("TAU_DATA_DIR", raising=False)
    build(EXAMPLE, tmp_path / "build")
    with pytest.raises(
        RuntimeFailure, match="tau-ranker-train failed; its evals were not submitted"
    ):
        submit_build(tmp_path / "build", say=lambda _: None, sleep=lambda _: None)
    assert [c[:2] for c in calls(tmp_path)] == [["run", "--config"], ["run", "status"]]


def test_a_dry_run_submits_every_workload_without_waiting(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TAU_BINARY", str(fake_tau(tmp_path, [])))
    monkeypatch.delenv("TAU_DATA_DIR", raising=False)
    build(EXAMPLE, tmp_path / "build")
    assert submit_build(tmp_path / "build", dry_run="server", say=lambda _: None) == 0
    assert [c[-1] for c in calls(tmp_path)] == ["--dry-run=server", "--dry-run=server"]


def test_submitting_from_inside_a_workload_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TAU_DATA_DIR", "/data")
    with pytest.raises(UsageError, match="inside a TauGrid workload"):
        submit_build(tmp_path)


def test_tau_python_passes_everything_through_and_keeps_the_exit_status(tmp_path) -> None:
    inspected = tau("python", "inspect", str(EXAMPLE), "-o", "json")
    assert inspected.returncode == 0, inspected.stderr
    workflows = json.loads(inspected.stdout)["workflows"]
    assert [(w["kind"], w["name"]) for w in workflows] == [
        ("train", "ranker-train"),
        ("eval", "ranker-eval"),
    ]
    assert "tau python build MODULE --out DIR" in tau("python").stdout
    unknown = tau("python", "publish")
    assert unknown.returncode == 2 and "has no subcommand 'publish'" in unknown.stderr
    missing = tau("python", "build", str(tmp_path / "none.py"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 2 and "not a Python file" in missing.stderr
    doctor = tau("python", "doctor", str(tmp_path / "none.py"))
    assert doctor.returncode == 1 and "FAIL  module" in doctor.stdout


def test_bootstrap_writes_a_starter_that_inspects(tmp_path: Path) -> None:
    assert tau("python", "bootstrap", str(tmp_path)).returncode == 0
    listed = tau("python", "inspect", str(tmp_path / "workflow.py"))
    assert listed.stdout.split("\n")[0].split() == ["train", "demo-train", "train"]
    again = tau("python", "bootstrap", str(tmp_path))
    assert again.returncode == 2 and "never overwrites" in again.stderr


def test_an_eval_after_an_unknown_train_is_refused(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import tau\n@tau.eval(name='e', after='missing')\ndef e(ctx):\n    pass\n")
    with pytest.raises(UsageError, match=r"runs after 'missing', which is not a @tau\.train"):
        build(module, tmp_path / "out")


def test_submit_builds_beside_the_module_so_tau_run_finds_the_repository(tmp_path, monkeypatch):
    from tau.sdk.submit import submit_module

    monkeypatch.setenv("TAU_BINARY", str(fake_tau(tmp_path, [])))
    monkeypatch.delenv("TAU_DATA_DIR", raising=False)
    module = tmp_path / "repo/workflow.py"
    module.parent.mkdir()
    module.write_text(EXAMPLE.read_text())
    assert submit_module(module, dry_run="client", say=lambda _: None) == 0
    built = tmp_path / "repo/.tau/python-build/workflow"
    assert read_build(built)["source"] == "workflow.py"
    assert calls(tmp_path)[0][2] == str(built / "ranker-train/ranker-train.yaml")

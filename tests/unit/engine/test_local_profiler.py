"""`profiler.*` locally: the entrypoint runs under the same profiler stage as in the pod.

With the tool on PATH the report lands under the local data root where the cluster's PVC
path maps; without it the run is refused once, before anything starts.
"""

from __future__ import annotations

from tests.unit.engine.conftest import project, run_name
from tests.unit.render import profiler_tools

CONFIG = """\
name: prof
engine: job
entrypoint: ../train.py
compute:
  gpus: 0
runtime:
  image: python:3.12-slim
storage:
  data_pvc: training-data
profiler:
  mode: nsys
  warmup: 2s
  duration: 1m
"""
TRAIN = """\
import os
print("profiled by", os.environ.get("PROFILED_BY", "nothing"))
"""


def test_the_local_run_is_captured_where_the_pod_path_maps(local, tmp_path):
    bin_dir = tmp_path / "bin"
    profiler_tools.install(bin_dir)
    local.env["PATH"] = f"{bin_dir}:{local.env['PATH']}"
    local.env[profiler_tools.LOG_ENV] = str(tmp_path / "calls.log")
    repo = project(tmp_path / "repo", "prof", CONFIG, {"train.py": TRAIN})
    result = local.tau("run", "prof", "--local", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "profiled by nsys" in result.stdout
    name = run_name(result.stderr)
    profile = local.data / "checkpoints" / "workflows" / name / "profile"
    assert f"profiler: rank 0 runs under nsys; reports in {profile}" in result.stderr
    assert (profile / "rank-0.nsys-rep").is_file()
    [call] = profiler_tools.calls(tmp_path / "calls.log")
    assert call["argv"][:5] == [
        "profile",
        "--force-overwrite=true",
        f"--output={profile / 'rank-0'}",
        "--delay=2",
        "--duration=60",
    ]


def test_without_the_tool_the_run_is_refused_before_it_starts(local, tmp_path):
    local.env["PATH"] = "/usr/bin:/bin"
    repo = project(tmp_path / "repo", "prof", CONFIG, {"train.py": TRAIN})
    result = local.tau("run", "prof", "--local", cwd=repo)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "nsys" in line]
    assert len(errors) == 1, result.stderr
    assert "profiler.mode nsys runs the entrypoint under nsys, which is not on PATH" in errors[0]
    assert "Traceback" not in result.stderr
    assert local.runs() == []

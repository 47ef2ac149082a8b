"""A RayJob target with Ray Tune runs on a private local Ray runtime and reports its best trial."""

from __future__ import annotations

import json
import os

from tests.unit.engine.conftest import alive, project, run_name

SWEEP = """\
import json, os
from pathlib import Path

import ray
from ray import tune


def objective(config):
    tune.report({"loss": (config["lr"] - 0.01) ** 2 + 0.0001 * config["batch_size"]})


ray.init()  # RAY_ADDRESS: the runtime the engine started for this attempt
print("cluster CPUs:", int(ray.cluster_resources()["CPU"]), flush=True)
space = {key: tune.grid_search(values) for key, values in json.loads(os.environ["SPACE"]).items()}
out = Path(os.environ["TAU_OUTPUT_DIR"])
tuner = tune.Tuner(
    objective,
    param_space=space,
    tune_config=tune.TuneConfig(
        metric="loss", mode="min", max_concurrent_trials=int(os.environ["TAU_NUM_WORKERS"])
    ),
    run_config=tune.RunConfig(storage_path=str(out / "ray_results"), name="sweep", verbose=0),
)
best = tuner.fit().get_best_result()
print("Best config:", json.dumps(best.config, sort_keys=True), flush=True)
(out / "best.json").write_text(json.dumps(best.config, sort_keys=True))
"""

CONFIG = """\
name: sweep
engine: rayjob
entrypoint: ../sweep.py
runtime:
  image: rayproject/ray:2.56.0-py311
  env:
    SPACE: '{"lr": [0.1, 0.01, 0.001], "batch_size": [32, 64]}'
compute:
  workers: 2
  gpus_per_worker: 0
"""


def test_ray_tune_sweep_runs_on_a_local_ray_runtime_and_reports_the_best_trial(local, tmp_path):
    repo = project(tmp_path / "repo", "sweep", CONFIG, {"sweep.py": SWEEP})
    result = local.tau("run", "sweep", "--local", cwd=repo, timeout=600)
    assert result.returncode == 0, result.stderr + result.stdout
    name = run_name(result.stderr)
    assert 'Best config: {"batch_size": 32, "lr": 0.01}' in result.stdout
    # compute.workers=2 maps to at least workers + 1 logical CPUs (room for the driver).
    assert f"cluster CPUs: {max(os.cpu_count() or 1, 3)}" in result.stdout
    output = local.data / "checkpoints" / "workflows" / name
    assert json.loads((output / "best.json").read_text()) == {"batch_size": 32, "lr": 0.01}
    doc = local.status(name, cwd=repo)
    assert doc["status"]["workloadKind"] == "RayJob"
    assert doc["rayJob"]["jobStatus"] == "SUCCEEDED"
    assert doc["job"]["found"] is False
    (attempt,) = local.record(name)["attempts"]
    assert attempt["ray_pgid"] and not alive(attempt["ray_pgid"])  # the runtime is gone


PING = """\
import ray

ray.init()


@ray.remote
def ping():
    return "pong"


print("remote says", ray.get(ping.remote()), flush=True)
"""


def test_a_ray_token_in_the_researchers_home_does_not_lock_the_driver_out(local, tmp_path):
    # Ray enables token auth when it finds ~/.ray/auth_token; the private runtime and its
    # driver must agree whatever the researcher's home holds, and that file stays untouched.
    home = tmp_path / "home"
    (home / ".ray").mkdir(parents=True)
    planted = home / ".ray" / "auth_token"
    planted.write_text("f" * 64)
    local.env["HOME"] = str(home)
    config = CONFIG.replace("name: sweep", "name: ping").replace("../sweep.py", "../ping.py")
    repo = project(tmp_path / "repo", "ping", config, {"ping.py": PING})
    result = local.tau("run", "ping", "--local", cwd=repo, timeout=600)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "remote says pong" in result.stdout
    assert planted.read_text() == "f" * 64
    assert "f" * 64 not in result.stdout + result.stderr

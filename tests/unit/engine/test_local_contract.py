"""The local process sees the cluster's env contract: same names, pod paths mapped locally."""

from __future__ import annotations

import json

from tests.unit.engine.conftest import project, run_name

DUMP_ENV = """\
import json, os
from pathlib import Path

out = Path(os.environ["TAU_OUTPUT_DIR"])
out.mkdir(parents=True, exist_ok=True)
(out / "env.json").write_text(json.dumps({k: v for k, v in os.environ.items()}))
staging = os.environ.get("TAU_OUTPUT_STAGING_DIR")
if staging:
    Path(staging, "weights.txt").write_text("w=3")
print("cwd", os.getcwd())
"""

STAGED = """\
name: staged
engine: job
entrypoint: ../dump.py
compute:
  gpus: 0
runtime:
  image: python:3.12-slim
  env:
    GREETING: hello
storage:
  data_pvc: research-data
  publish: staged
execution:
  configs:
    seed: 7
experiment:
  project: contract
  name: env-check
  group: local
"""


def rendered_env_names(local, repo) -> set[str]:
    import yaml

    result = local.tau("run", "staged", "--dry-run=client", cwd=repo)
    assert result.returncode == 0, result.stderr
    (job,) = list(yaml.safe_load_all(result.stdout))
    (main,) = job["spec"]["template"]["spec"]["containers"]
    return {entry["name"] for entry in main["env"]}


def test_the_process_gets_every_rendered_variable_with_data_and_scratch_mapped(local, tmp_path):
    repo = project(tmp_path / "repo", "staged", STAGED, {"dump.py": DUMP_ENV})
    result = local.tau("run", "staged", "--local", cwd=repo)
    assert result.returncode == 0, result.stderr
    name = run_name(result.stderr)
    output = local.data / "checkpoints" / "workflows" / name
    env = json.loads((output / "env.json").read_text())

    assert rendered_env_names(local, repo) <= set(env)  # one contract, from the renderer
    assert env["TAU_DATA_DIR"] == str(local.data)
    assert env["TAU_OUTPUT_DIR"] == str(output)
    assert env["TAU_DURABLE_CHECKPOINTS_DIR"] == str(local.data / "checkpoints")
    hot = local.state / "runs" / name / "mnt"
    assert env["TAU_HOT_DIR"] == str(hot)
    assert env["TAU_OUTPUT_STAGING_DIR"] == str(hot / "tau-output" / name)
    assert env["GREETING"] == "hello"
    assert env["TAU_RUN_NAME"] == name and env["TAU_EXP_STORE"] == str(local.store)
    assert "TAU_RETRY_ATTEMPT" not in env
    assert f"cwd {local.data}" in result.stdout  # /data is the working dir, as in the pod

    # Staged publish: the staging file is published with the completion marker, /mnt is gone.
    record = local.record(name)
    publication = output / ".tau-artifacts" / record["publication_id"]
    assert (publication / "weights.txt").read_text() == "w=3"
    marker = (publication / ".tau-artifacts-complete").read_text().strip()
    assert marker == f"complete {record['publication_id']}"
    assert not hot.exists()
    got = json.loads(local.tau("run", "get", name, "-o", "json", cwd=repo).stdout)
    assert got["published"] is True

    # The engine's own record lands in the store with the experiment fields and the output.
    found = local.portal("search", "-q", name, "-o", "json")
    (row,) = json.loads(found.stdout)["runs"]
    assert (row["project"], row["experiment_id"], row["run_group_id"]) == (
        "contract",
        "env-check",
        "local",
    )
    query = f"SELECT name FROM artifacts WHERE run_id = '{name}' AND direction = 'output'"
    artifacts = local.portal("sql", query, "-o", "json")
    assert artifacts.returncode == 0, artifacts.stderr
    assert "weights.txt" in artifacts.stdout


def test_a_user_value_for_a_managed_variable_is_refused(local, tmp_path):
    config = STAGED.replace("    GREETING: hello", "    TAU_OUTPUT_DIR: /elsewhere")
    repo = project(tmp_path / "repo", "staged", config, {"dump.py": DUMP_ENV})
    result = local.tau("run", "staged", "--local", cwd=repo)
    assert result.returncode == 2
    assert "TAU_OUTPUT_DIR" in result.stderr
    assert local.runs() == []


TORCHRUN = """\
name: ddp
engine: job
entrypoint: ../dump.py
compute:
  gpus: 0
runtime:
  image: python:3.12-slim
execution:
  launcher: torchrun
"""


def test_torchrun_without_torch_is_a_clear_error_before_anything_starts(local, tmp_path):
    """The test environment deliberately has no torch (PyPI's Linux wheel pulls ~2.5 GB of
    CUDA libraries); the launcher must say what is missing rather than fail inside torchrun."""
    repo = project(tmp_path / "repo", "ddp", TORCHRUN, {"dump.py": DUMP_ENV})
    result = local.tau("run", "ddp", "--local", cwd=repo)
    assert result.returncode == 1
    assert "execution.launcher: torchrun runs torch.distributed.run, but 'torch' is not" in (
        result.stderr
    )
    assert "pip install 'torch'" in result.stderr
    assert local.runs() == []

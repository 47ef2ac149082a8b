"""examples/ray-tune-smoke and examples/cpu-multi-interest-ray: every command their docs print.

The offline blocks run in test_readmes.py. Here: the GPU Ray Tune page's researcher flow, which
copies tau.yaml and train.py into a fresh repository and dry-runs from there (so the example
must not depend on anything else in this checkout), and every cluster command the READMEs
print must parse against the real CLI, so a renamed flag breaks this test, not the reader.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .test_aks_cpu_quickstart import parse

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
TAU = str(Path(sys.executable).parent / "tau")


def cluster_commands(example: str) -> list[list[str]]:
    """The tau commands of the README's bash blocks outside `## Offline`, pipes and comments cut."""
    readme = (EXAMPLES / example / "README.md").read_text()
    found = []
    for heading, body in re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", readme, re.S | re.M):
        if heading == "Offline":
            continue
        for block in re.findall(r"```bash\n(.*?)```", body, re.S):
            for line in block.splitlines():
                argv = shlex.split(line.split("|")[0], comments=True)
                if argv and argv[0] == "tau":
                    found.append(argv[1:])
    return found


def test_the_gpu_ray_tune_pages_copied_repository_dry_runs_the_six_trial_rayjob(tmp_path):
    for name in ("tau.yaml", "train.py"):
        shutil.copy(EXAMPLES / "ray-tune-smoke" / name, tmp_path / name)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = subprocess.run(
        [TAU, "run", "--config", "tau.yaml", "--dry-run=client"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (rayjob,) = [d for d in yaml.safe_load_all(done.stdout) if d]
    assert (rayjob["kind"], rayjob["metadata"]["name"]) == ("RayJob", "tune-smoke")
    (worker,) = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    assert (worker["replicas"], worker["rayStartParams"]["num-gpus"]) == (1, "1")


@pytest.mark.parametrize(
    ("example", "expected"),
    [("ray-tune-smoke", 4), ("cpu-multi-interest-ray", 3)],
)
def test_every_cluster_command_the_readme_prints_parses(example: str, expected: int):
    commands = cluster_commands(example)
    assert len(commands) == expected, commands
    for argv in commands:
        parse(argv)

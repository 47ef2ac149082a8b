"""Benchmark: `tau run --dry-run=client` vs `kubectl create --dry-run=client -o yaml`.

Both print the same objects (tau renders them from tau.yaml; kubectl re-reads tau's output),
so the ratio is what resolution + rendering costs on top of the floor set by the reference
client. Target: median ratio <= 1.5. kubectl needs an API server for its REST mapping, so
this uses the local control plane (`hack/localcluster`): an existing one via --kubeconfig,
else a fresh one started for the run and stopped afterwards.

    python bench/dry_run.py [--runs 15] [--kubeconfig PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchkit import REPO, compile_tau, on_cluster, timed

TARGETS = (
    ("quickstart Job", REPO / "examples/quickstart", "train"),
    ("torchrun 2x4 Job", REPO / "examples/torchrun", "train"),
    ("RayJob 2x8 (Tune)", REPO / "examples/quickstart", "ray-tune"),
)


def bench(kubectl: Path, kubeconfig: Path, runs: int) -> None:
    tau = Path(sys.executable).parent / "tau"
    compile_tau()
    with tempfile.TemporaryDirectory() as config_dir:
        env = {**os.environ, "TAU_CONFIG_DIR": config_dir}
        env.pop("TAU_CONTEXT", None)
        wall_ratios, cpu_ratios = [], []
        print(f"{'target':<20} {'tau ms':>8} {'kubectl ms':>11} {'wall x':>7} {'cpu x':>7}")
        for label, cwd, target in TARGETS:
            tau_cmd = [str(tau), "run", target, "--dry-run=client"]
            manifest = subprocess.run(
                tau_cmd, cwd=cwd, env=env, capture_output=True, text=True, check=True
            ).stdout
            kubectl_cmd = [
                str(kubectl),
                f"--kubeconfig={kubeconfig}",
                "create",
                "-f",
                "-",
                "--dry-run=client",
                "-o",
                "yaml",
            ]
            timed(kubectl_cmd, cwd=cwd, env=env, stdin=manifest)  # warm caches
            tau_runs, kubectl_runs = [], []
            for _ in range(runs):
                tau_runs.append(timed(tau_cmd, cwd=cwd, env=env))
                kubectl_runs.append(timed(kubectl_cmd, cwd=cwd, env=env, stdin=manifest))
            tau_wall = statistics.median(run.wall for run in tau_runs)
            kubectl_wall = statistics.median(run.wall for run in kubectl_runs)
            tau_cpu = statistics.median(run.cpu for run in tau_runs)
            kubectl_cpu = statistics.median(run.cpu for run in kubectl_runs)
            wall_ratios.append(tau_wall / kubectl_wall)
            cpu_ratios.append(tau_cpu / kubectl_cpu)
            print(
                f"{label:<20} {tau_wall * 1000:>8.0f} {kubectl_wall * 1000:>11.0f} "
                f"{wall_ratios[-1]:>7.2f} {cpu_ratios[-1]:>7.2f}"
            )
        print(
            f"median ratio tau/kubectl: wall {statistics.median(wall_ratios):.2f}, "
            f"cpu {statistics.median(cpu_ratios):.2f} (target <= 1.5)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--kubeconfig", type=Path, help="admin kubeconfig of a running cluster")
    args = parser.parse_args()
    on_cluster(
        args.kubeconfig,
        lambda cluster: bench(cluster.bin_dir / "kubectl", cluster.kubeconfig, args.runs),
        " for kubectl's API discovery",
    )


if __name__ == "__main__":
    main()

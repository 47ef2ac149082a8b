"""Benchmark: the TauGrid experiment store vs MLflow (local SQLite backend).

    python bench/evidence.py                     # 1,000 runs x 10 metrics x 1,000 steps
    python bench/evidence.py --mlflow-runs 1000  # MLflow over every run too (slow)

Workload: one W&B-style JSONL history per run. TauGrid imports each with `import_jsonl`
(Parquet + incremental summaries + artifact copy + catalogue rows, fsynced); MLflow logs the
same points with `MlflowClient.log_batch` (1,000 metrics per call) into `sqlite:///mlflow.db`,
which maintains its own latest-metric table. Both sides parse the same files inside the timer.
By default MLflow runs on a sample of the runs and its time is extrapolated linearly (it
scales linearly in points); the output says so. Also measured: a summary query over all
runs, and one page of a 1M-point series downsampled by the server.

MLflow is not a TauGrid dependency: it is installed on first use into its own virtualenv
under ${XDG_CACHE_HOME:-~/.cache}/taugrid/bench-mlflow-venv, so the project venv is untouched.
Prints times and ratios; never asserts on time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MLFLOW_SCRIPT = r"""
import json, sys, time
from pathlib import Path
import mlflow
from mlflow.entities import Metric
from mlflow.tracking import MlflowClient

work, runs = Path(sys.argv[1]), int(sys.argv[2])
db = work / "mlflow.db"
if db.exists():
    db.unlink()
client = MlflowClient(tracking_uri=f"sqlite:///{db}")
experiment = client.create_experiment("bench", artifact_location=str(work / "mlflow-artifacts"))
files = sorted((work / "histories").glob("run-*.jsonl"))[:runs]
points = 0
start = time.perf_counter()
for path in files:
    run = client.create_run(experiment, run_name=path.stem)
    batch = []
    for line in path.open():
        row = json.loads(line)
        step, ts = int(row.pop("_step")), int(row.pop("_timestamp") * 1000)
        for key, value in row.items():
            batch.append(Metric(key, float(value), ts, step))
            if len(batch) == 1000:
                client.log_batch(run.info.run_id, metrics=batch)
                points += len(batch)
                batch = []
    if batch:
        client.log_batch(run.info.run_id, metrics=batch)
        points += len(batch)
    client.set_terminated(run.info.run_id)
print(json.dumps({"seconds": time.perf_counter() - start, "runs": len(files), "points": points}))
"""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def generate(work: Path, runs: int, steps: int, metrics: int) -> Path:
    directory = work / "histories"
    stamp = directory / f".complete-{runs}-{steps}-{metrics}"
    if stamp.exists():
        return directory
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    names = [
        "train/loss",
        "eval/loss",
        "accuracy",
        "train/lr",
        "grad_norm",
        "tokens_per_s",
        "gpu/util",
        "eval/score",
        "step_time",
        "policy/entropy",
    ]
    names += [f"extra_{i}" for i in range(max(0, metrics - len(names)))]
    names = names[:metrics]
    rng = random.Random(7)
    for run in range(runs):
        decay = rng.uniform(1.0, 5.0)
        lines = []
        for step in range(steps):
            base = math.exp(-decay * step / steps)
            row = {"_step": step, "_timestamp": 1760000000.0 + step * 0.5}
            for index, name in enumerate(names):
                row[name] = round(base * (index + 1) + rng.random() * 0.01, 6)
            lines.append(json.dumps(row))
        (directory / f"run-{run:05d}.jsonl").write_text("\n".join(lines) + "\n")
        if run % 100 == 99:
            log(f"  generated {run + 1}/{runs} histories")
    stamp.touch()
    return directory


def bench_tau(work: Path, histories: Path, runs: int) -> tuple[float, Path]:
    from tau.evidence import ImportRequest, import_jsonl, init_experiment

    store = work / "tau-store"
    shutil.rmtree(store, ignore_errors=True)
    init_experiment(store, "bench")
    files = sorted(histories.glob("run-*.jsonl"))[:runs]
    start = time.perf_counter()
    for index, path in enumerate(files):
        import_jsonl(
            store,
            ImportRequest(
                run_id=path.stem, history=[str(path)], experiment="bench", group=f"g{index % 10}"
            ),
        )
        if index % 100 == 99:
            log(
                f"  tau: imported {index + 1}/{len(files)} runs "
                f"({time.perf_counter() - start:.1f}s)"
            )
    return time.perf_counter() - start, store


def mlflow_python() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "taugrid"
    venv = cache / "bench-mlflow-venv"
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import mlflow"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    log(f"  installing mlflow into {venv} (first run only)")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "mlflow"], check=True)
    return python


def bench_mlflow(work: Path, runs: int) -> dict[str, float]:
    python = mlflow_python()
    env = {**os.environ, "MLFLOW_ENABLE_ASYNC_LOGGING": "false", "GIT_PYTHON_REFRESH": "quiet"}
    result = subprocess.run(
        [str(python), "-c", MLFLOW_SCRIPT, str(work), str(runs)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"mlflow benchmark failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def bench_summary_query(store: Path) -> tuple[float, int]:
    from tau.evidence import Store
    from tau.evidence.query import RunQuery, search_runs

    handle = Store.open(store)
    start = time.perf_counter()
    found = search_runs(handle, RunQuery(metric_filters=[], limit=1000))
    return time.perf_counter() - start, found["count"]


def bench_series_page(work: Path, points: int) -> tuple[float, float, int]:
    from fastapi.testclient import TestClient

    from tau.evidence import ImportRequest, Store, import_jsonl, init_experiment
    from tau.portal.server import ServerConfig, create_app

    store = work / "series-store"
    shutil.rmtree(store, ignore_errors=True)
    init_experiment(store, "series")
    path = work / "long.jsonl"
    with path.open("w") as handle:
        for step in range(points):
            handle.write(f'{{"_step":{step},"loss":{math.sin(step / 5000) + step * 1e-6:.6f}}}\n')
    import_jsonl(store, ImportRequest(run_id="long", history=[str(path)]))
    # The server refuses Host headers other than loopback (DNS-rebinding guard).
    app = create_app(ServerConfig(store=Store.open(store)))
    client = TestClient(app, base_url="http://127.0.0.1")
    start = time.perf_counter()
    response = client.get("/api/v2/stellar/runs/long/series", params={"metric": "loss"})
    first = time.perf_counter() - start
    start = time.perf_counter()
    response = client.get("/api/v2/stellar/runs/long/series", params={"metric": "loss"})
    second = time.perf_counter() - start
    response.raise_for_status()
    return first, second, response.json()["series"][0]["returned"]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument(
        "--mlflow-runs",
        type=int,
        default=20,
        help="runs MLflow logs; its time is extrapolated to --runs (default 20)",
    )
    parser.add_argument("--series-points", type=int, default=1_000_000)
    parser.add_argument(
        "--workdir", default="", help="keep generated data here (default: temp dir)"
    )
    args = parser.parse_args()

    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="tau-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    total_points = args.runs * args.steps * args.metrics
    log(
        f"workload: {args.runs} runs x {args.metrics} metrics x {args.steps} steps "
        f"= {total_points:,} points in {work}"
    )
    histories = generate(work, args.runs, args.steps, args.metrics)

    log("tau: importing JSONL histories (Parquet + summaries)")
    tau_seconds, store = bench_tau(work, histories, args.runs)

    mlflow_runs = min(args.mlflow_runs, args.runs)
    log(f"mlflow: log_batch over {mlflow_runs} runs (sqlite backend)")
    mlflow = bench_mlflow(work, mlflow_runs)
    mlflow_full = mlflow["seconds"] * args.runs / mlflow["runs"]
    query_seconds, query_runs = bench_summary_query(store)
    log(f"series: one run with {args.series_points:,} points")
    cold, warm, returned = bench_series_page(work, args.series_points)

    note = (
        "" if mlflow["runs"] == args.runs else f" (measured on {mlflow['runs']} runs, extrapolated)"
    )
    print(f"points                       {total_points:,}")
    print(
        f"tau import + summaries       {tau_seconds:10.1f} s  "
        f"({total_points / tau_seconds:,.0f} points/s)"
    )
    print(
        f"mlflow log_batch (sqlite)    {mlflow_full:10.1f} s  "
        f"({mlflow['points'] / mlflow['seconds']:,.0f} points/s){note}"
    )
    print(f"ratio mlflow / tau           {mlflow_full / tau_seconds:10.1f} x  (target >= 20x)")
    print(f"summary query, {query_runs} runs     {query_seconds * 1000:10.1f} ms")
    print(
        f"series page, {args.series_points:,} points -> {returned} (LTTB): "
        f"{cold * 1000:.0f} ms first, {warm * 1000:.0f} ms repeat"
    )
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

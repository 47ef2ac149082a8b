"""Benchmark: the metrics offloader, JSONL history → workspace store.

    python bench/offload.py                  # 2M points throughput + 30 s lag at 1,000 pts/s
    python bench/offload.py --points 500000 --lag-seconds 10

1. Throughput: a W&B-style history of N points (10 metrics per line) is offloaded by one
   `taugrid-portal experiment offload metrics` pass (a real process: validation, chunking,
   checkpoint, Parquet, summaries, catalogue), timed end to end. Target >= 200,000 points/s.
2. Lag: a trainer thread appends 1,000 points/s (100 lines/s) for --lag-seconds while the
   offloader runs in --watch mode with the sidecar's rendered interval; a reader polls
   `experiment search` (the store query the CLI and Portal use) and records, for every step
   it sees appear, how long after that step was written it became visible. Target p95 <= 5 s.

Prints the measurements and their ratio to target (>= 1.0 is within target); never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

THROUGHPUT_TARGET = 200_000.0
LAG_TARGET = 5.0
METRICS = 10
RATE = 1_000
REPO = Path(__file__).resolve().parents[1]


def offload_argv(work: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tau.portal",
        "experiment",
        "--store",
        str(work / "store"),
        "offload",
        "metrics",
        "--out",
        str(work / "out"),
        "--history",
        str(work / "history" / "*.jsonl"),
        "--run",
        "bench",
        "--project",
        "bench",
        "--experiment",
        "offload",
        "-o",
        "json",
        *extra,
    ]


def line(step: int) -> str:
    row = {"_step": step, "_timestamp": 1760000000.0 + step * 0.01}
    row.update({f"metric_{m}": 1.0 / (step + m + 1) for m in range(METRICS)})
    return json.dumps(row) + "\n"


def throughput(points: int) -> tuple[float, float]:
    """(points per wall second, points per CPU second of the offloader process)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "history").mkdir()
        with open(work / "history" / "metrics.jsonl", "w") as handle:
            for step in range(points // METRICS):
                handle.write(line(step))
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(offload_argv(work), env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            sys.exit(f"offload failed: {done.stderr.strip()}")
        stored = json.loads(done.stdout)["points"]
        if stored != points:
            sys.exit(f"offload stored {stored} points, expected {points}")
        return points / elapsed, points / cpu


def lag(seconds: float, interval: str) -> list[float]:
    from tau.evidence import Store
    from tau.evidence.query import RunQuery, search_runs

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "history").mkdir()
        history = work / "history" / "metrics.jsonl"
        history.touch()
        written: dict[int, float] = {}
        stop = threading.Event()

        def trainer() -> None:
            lines_per_second = RATE // METRICS
            step = 0
            start = time.monotonic()
            with open(history, "a") as handle:
                while not stop.is_set():
                    due = start + step / lines_per_second
                    if time.monotonic() < due:
                        time.sleep(due - time.monotonic())
                    handle.write(line(step))
                    handle.flush()
                    written[step] = time.monotonic()
                    step += 1

        env = {**os.environ, "PYTHONPATH": str(REPO)}
        offloader = subprocess.Popen(
            offload_argv(work, "--watch", "--interval", interval),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while not (work / "store" / "manifest.json").exists():
            time.sleep(0.05)
        writer = threading.Thread(target=trainer)
        writer.start()
        lags: list[float] = []
        seen = -1
        deadline = time.monotonic() + seconds
        store = Store.open(work / "store")
        while time.monotonic() < deadline:
            runs = search_runs(store, RunQuery(target="bench"))["runs"]
            now = time.monotonic()
            latest = runs[0]["max_step"] if runs and runs[0]["max_step"] is not None else -1
            for step in range(seen + 1, latest + 1):
                lags.append(now - written[step])
            seen = max(seen, latest)
            time.sleep(0.05)
        stop.set()
        writer.join()
        (work / "complete").write_text("")
        offloader.terminate()
        offloader.wait(timeout=300)
        return lags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=2_000_000)
    parser.add_argument("--lag-seconds", type=float, default=30.0)
    parser.add_argument(
        "--interval", default="2s", help="Offloader interval (the sidecar renders 2s)."
    )
    args = parser.parse_args()

    wall, cpu = throughput(args.points)
    print(
        f"throughput: {args.points:,} points in one pass (process start included): "
        f"{wall:,.0f} points/s wall, {cpu:,.0f} points per CPU second"
    )
    print(
        f"  ratio to target ({THROUGHPUT_TARGET:,.0f}/s): {wall / THROUGHPUT_TARGET:.2f} wall, "
        f"{cpu / THROUGHPUT_TARGET:.2f} CPU (load average {os.getloadavg()[0]:.1f})"
    )

    lags = sorted(lag(args.lag_seconds, args.interval))
    if not lags:
        sys.exit("lag: no point became visible in search")
    p50 = statistics.median(lags)
    p95 = lags[min(len(lags) - 1, int(0.95 * len(lags)))]
    print(
        f"lag at {RATE:,} points/s for {args.lag_seconds:g} s (interval {args.interval}): "
        f"p50 {p50:.2f} s, p95 {p95:.2f} s, max {lags[-1]:.2f} s over {len(lags):,} steps"
    )
    print(f"  ratio to target (p95 <= {LAG_TARGET:g} s): {LAG_TARGET / p95:.2f}")


if __name__ == "__main__":
    main()

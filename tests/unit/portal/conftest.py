"""A small populated store shared by the portal suites (built once, read-only)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from tau.evidence import (
    ImportRequest,
    RunRecord,
    TrackRequest,
    import_jsonl,
    init_experiment,
    track_run,
)


def build_demo_store(root: Path, history_dir: Path) -> Path:
    """Three runs in two groups of experiment `demo`, each with loss and accuracy."""
    init_experiment(root, "demo", project="demo", description="Demo experiment")
    history_dir.mkdir(parents=True, exist_ok=True)
    for index, (run, group, rate) in enumerate(
        [("run-a", "base", 1.0), ("run-b", "base", 2.0), ("run-c", "wide", 3.0)]
    ):
        path = history_dir / f"{run}.jsonl"
        with path.open("w") as handle:
            for step in range(50):
                loss = math.exp(-rate * step / 50) + 0.01 * index
                handle.write(
                    json.dumps(
                        {
                            "_step": step,
                            "_timestamp": 1760000000 + step,
                            "train/loss": loss,
                            "accuracy": 1 - loss,
                        }
                    )
                    + "\n"
                )
        import_jsonl(
            root, ImportRequest(run_id=run, history=[str(path)], experiment="demo", group=group)
        )
    track_run(
        root, TrackRequest(run=RunRecord(run_id="run-c"), metrics={"nan_metric": math.nan}, step=1)
    )
    return root


def serve_argv(store: Path, addr: str, *flags: str) -> list[str]:
    """The real Stellar server process: `taugrid-portal experiment --store S serve --addr A`."""
    return [sys.executable, "-m", "tau.portal", "experiment", "--store", str(store), "serve",
            "--addr", addr, *flags]  # fmt: skip


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("portal")
    return build_demo_store(base / "store", base / "histories")

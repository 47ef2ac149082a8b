"""A managed train → eval workflow written with the TauGrid Python SDK.

    tau python inspect examples/sdk-workflow/workflow.py
    tau python build examples/sdk-workflow/workflow.py --out build/sdk-workflow
    tau python submit examples/sdk-workflow/workflow.py --dry-run=client

`ranker-train` fits a tiny linear ranker on CPU Ray workers and saves its weights as the
run's checkpoint; `ranker-eval` runs after it with that checkpoint as
`ctx.upstream_checkpoint`. Both report metrics, which `tau data model index rebuild` turns
into model registry rows (`tau data model best ranker`).
"""

from __future__ import annotations

import json
import random

import tau

RAY_IMAGE = "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.54.0"


def _data(seed: int, n: int = 400) -> list[tuple[list[float], float]]:
    rng = random.Random(seed)
    truth = [0.7, -0.2, 0.4]
    rows = []
    for _ in range(n):
        x = [rng.uniform(-1, 1) for _ in truth]
        rows.append((x, sum(w * v for w, v in zip(truth, x, strict=True)) + rng.gauss(0, 0.05)))
    return rows


def _loss(weights: list[float], rows: list[tuple[list[float], float]]) -> float:
    errors = [(sum(w * v for w, v in zip(weights, x, strict=True)) - y) ** 2 for x, y in rows]
    return sum(errors) / len(errors)


@tau.train(
    name="ranker-train",
    gpus=0,
    workers=2,
    image=RAY_IMAGE,
    pip=[],
    data_pvc="blob-training",
    model="ranker",
    task="ranking",
    primary_metric="loss",
    metric_direction="lower",
    experiment="ranker-sdk",
)
def train(ctx: tau.Ctx, steps: int = 200, lr: float = 0.1) -> float:
    rows = _data(seed=1)
    weights = [0.0, 0.0, 0.0]
    for step in range(steps):
        grads = [0.0] * len(weights)
        for x, y in rows:
            error = sum(w * v for w, v in zip(weights, x, strict=True)) - y
            grads = [g + 2 * error * v / len(rows) for g, v in zip(grads, x, strict=True)]
        weights = [w - lr * g for w, g in zip(weights, grads, strict=True)]
        if step % 50 == 0:
            print(f"step={step} loss={_loss(weights, rows):.5f}")
    ctx.checkpoint_dir.mkdir(parents=True, exist_ok=True)
    ctx.checkpoint_path.write_text(json.dumps({"weights": weights}))
    loss = _loss(weights, rows)
    ctx.report(loss=loss)
    return loss


@tau.eval(
    name="ranker-eval",
    after="ranker-train",
    gpus=1,
    cpu_workers=2,
    image=RAY_IMAGE,
    pip=[],
    data_pvc="blob-training",
)
def evaluate(ctx: tau.Ctx) -> float:
    if ctx.upstream_checkpoint is None:
        raise SystemExit("ranker-eval needs the checkpoint of ranker-train")
    weights = json.loads(ctx.upstream_checkpoint.read_text())["weights"]
    loss = _loss(weights, _data(seed=2))
    ctx.report(eval_loss=loss)
    print(f"held-out loss={loss:.5f}")
    return loss

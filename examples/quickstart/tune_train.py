"""One Ray Tune trial: the toy regression of train.py, scored by test loss.

Tau's generated Tune driver calls `train_loop(config)` once per trial with one point of
`execution.configs` (for example {"lr": 0.01, "batch_size": 32}) and forwards every reported
metric to the Tune result grid. Run it directly to try one point locally.
"""

import json
import random
import sys


def report(metrics: dict[str, float]) -> None:
    try:
        from ray import train
    except ImportError:
        print(json.dumps(metrics))
        return
    train.report(metrics)


def train_loop(config: dict[str, float]) -> None:
    lr, batch_size = float(config["lr"]), int(config["batch_size"])
    rng = random.Random(0)
    data = [(x, 3.0 * x - 2.0) for x in (rng.uniform(-1, 1) for _ in range(512))]
    w = b = 0.0
    for epoch in range(20):
        for start in range(0, len(data), batch_size):
            batch = data[start : start + batch_size]
            grad_w = sum(2 * ((w * x + b) - y) * x for x, y in batch) / len(batch)
            grad_b = sum(2 * ((w * x + b) - y) for x, y in batch) / len(batch)
            w, b = w - lr * grad_w, b - lr * grad_b
        loss = sum(((w * x + b) - y) ** 2 for x, y in data) / len(data)
        report({"loss": loss, "epoch": epoch})


if __name__ == "__main__":
    train_loop(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {"lr": 0.1, "batch_size": 32})

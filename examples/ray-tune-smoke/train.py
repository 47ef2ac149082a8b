"""One Ray Tune trial of the tune-smoke sweep: five steps of a deterministic loss.

Tau's generated Tune driver calls `train_loop(config)` once per trial with one point of
`execution.configs` and forwards every reported metric to the Tune result grid. The loss is
closed-form so the docs can name the best result exactly: {'batch_size': 32, 'lr': 0.1}
ends at 1 / (0.1 + 0.1 * 4 / 5) + 32 * 0.001 = 5.587555555555555.
"""

import json
import sys

STEPS = 5


def report(metrics: dict[str, float]) -> None:
    try:
        from ray import train
    except ImportError:
        print(json.dumps(metrics))
        return
    train.report(metrics)


def loss_at(step: int, lr: float, batch_size: int) -> float:
    return 1 / (0.1 + lr * step / STEPS) + batch_size * 0.001


def train_loop(config: dict[str, float]) -> None:
    lr, batch_size = float(config["lr"]), int(config["batch_size"])
    for step in range(STEPS):
        report({"loss": loss_at(step, lr, batch_size), "step": step})


if __name__ == "__main__":
    train_loop(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {"lr": 0.1, "batch_size": 32})

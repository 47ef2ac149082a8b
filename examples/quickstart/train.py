"""A tiny pure-Python "training" run: fit y = 3x - 2 with SGD and log metrics with tau.stellar.

`stellar.log` writes W&B-style history rows (`_step`, `_timestamp`, loss, accuracy) into a
local packet under $TAU_OUTPUT_DIR/stellar/<run>/; `stellar.finish()` syncs the packet into
the experiment store ($TAU_EXP_STORE, or ./.tau/store when nothing is configured). The
fitted weights go to $TAU_OUTPUT_DIR/model.json. Without TAU_OUTPUT_DIR it writes to ./outputs.

    python train.py
    taugrid-portal experiment --store .tau/store search -q toy-regression
"""

import argparse
import json
import os
import random
from pathlib import Path

from tau import stellar


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=int(os.environ.get("TRAIN_STEPS", "300")))
    parser.add_argument("--lr", type=float, default=float(os.environ.get("LEARNING_RATE", "0.05")))
    return parser.parse_args()


def make_data(rng: random.Random, n: int) -> list[tuple[float, float]]:
    points = []
    for _ in range(n):
        x = rng.uniform(-1.0, 1.0)
        points.append((x, 3.0 * x - 2.0 + rng.gauss(0.0, 0.1)))
    return points


def main() -> None:
    args = parse_args()
    rng = random.Random(args.seed)
    train, test = make_data(rng, 256), make_data(rng, 64)
    out = Path(os.environ.get("TAU_OUTPUT_DIR", "outputs"))
    out.mkdir(parents=True, exist_ok=True)
    stellar.init(
        project="quickstart",
        experiment="toy-regression",
        group="baseline",
        config=vars(args),
        dir=out / "stellar",
    )

    w, b = 0.0, 0.0
    for step in range(1, args.steps + 1):
        x, y = train[step % len(train)]
        error = (w * x + b) - y
        w -= args.lr * 2 * error * x
        b -= args.lr * 2 * error
        if step % 10 == 0 or step == args.steps:
            loss = sum(((w * x + b) - y) ** 2 for x, y in test) / len(test)
            # "accuracy": share of test points predicted within 0.25 of the target.
            accuracy = sum(abs((w * x + b) - y) < 0.25 for x, y in test) / len(test)
            stellar.log({"loss": loss, "accuracy": accuracy}, step=step)

    (out / "model.json").write_text(json.dumps({"w": w, "b": b, "steps": args.steps}) + "\n")
    stellar.log_artifact(out / "model.json", name="model", type="checkpoint")
    synced = stellar.finish()
    print(f"trained {args.steps} steps: w={w:.3f} b={b:.3f} loss={loss:.4f} acc={accuracy:.2f}")
    print(f"evidence: run {synced['run']} in store {synced['store']}")


if __name__ == "__main__":
    main()

"""Train the market-policy actor-critic: 8 observations -> 24 hidden units -> 3 actions + reward.

A synthetic market-making environment (no market data): each step observes price return,
signal, volatility, inventory, spread, momentum and the time of day (sin, cos). The actor
learns the position (Short / Flat / Long) an oracle with hindsight of the next return would
take; the critic learns the reward that position earns. Together: 8*24+24 + 24*3+3 + 24+1 =
316 parameters.

The export `tau-market-policy.json` holds plain lists of weights, so `serve.py` (and a
browser Worker) can run the model without PyTorch. Training on CPU with a fixed seed is
deterministic: two runs produce byte-identical exports.

    python train.py --device cpu --output ./tau-market-policy.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

ACTIONS = ("Short", "Flat", "Long")
INPUTS, HIDDEN = 8, 24
FORMAT = "tau-market-policy/v1"
INVENTORY_PENALTY = 0.1


def parse_args() -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=int(env("MARKET_POLICY_STEPS", "4000")))
    parser.add_argument("--batch", type=int, default=int(env("MARKET_POLICY_BATCH", "256")))
    parser.add_argument("--seed", type=int, default=int(env("MARKET_POLICY_SEED", "20260626")))
    parser.add_argument(
        "--output",
        default=env("MARKET_POLICY_OUTPUT", "/data/market-policy/tau-market-policy.json"),
    )
    parser.add_argument("--device", default=env("MARKET_POLICY_DEVICE", "auto"))
    parser.add_argument("--metrics", default=env("MARKET_POLICY_METRICS", ""))
    return parser.parse_args()


def market(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations, the oracle's action and the reward of taking it."""
    signal = rng.normal(0.0, 1.0, n)
    volatility = rng.uniform(0.1, 1.0, n)
    momentum = rng.normal(0.0, 1.0, n)
    inventory = rng.uniform(-1.0, 1.0, n)
    spread = rng.uniform(0.0, 0.2, n)
    hour = rng.uniform(0.0, 2 * math.pi, n)
    price_return = rng.normal(0.0, 0.5, n)
    drift = 0.6 * signal + 0.3 * momentum - 0.4 * inventory
    obs = np.stack(
        [price_return, signal, volatility, inventory, spread, momentum, np.sin(hour), np.cos(hour)],
        axis=1,
    ).astype(np.float32)
    action = np.where(drift > 0.35, 2, np.where(drift < -0.35, 0, 1))
    # What the oracle's position earns: the edge beyond the threshold, less spread and an
    # inventory-risk charge (continuous in the observation, so the critic can fit it).
    edge = np.maximum(np.abs(drift) - 0.35, 0.0)
    reward = 0.1 * edge * (1.0 - spread) - INVENTORY_PENALTY * 0.1 * np.abs(inventory) * volatility
    return obs, action.astype(np.int64), reward.astype(np.float32)


class ActorCritic(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(INPUTS, HIDDEN)
        self.policy = nn.Linear(HIDDEN, len(ACTIONS))
        self.value = nn.Linear(HIDDEN, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.tanh(self.hidden(obs))
        return self.policy(h), self.value(h).squeeze(-1)


def device(choice: str) -> torch.device:
    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(choice)


def export(model: ActorCritic, metrics: dict, args: argparse.Namespace, where: str) -> dict:
    def layer(linear: nn.Linear) -> dict:
        return {
            "weight": [[round(float(v), 8) for v in row] for row in linear.weight.detach().cpu()],
            "bias": [round(float(v), 8) for v in linear.bias.detach().cpu()],
        }

    return {
        "format": FORMAT,
        "architecture": {
            "inputs": INPUTS,
            "hidden": HIDDEN,
            "activation": "tanh",
            "actions": list(ACTIONS),
        },
        "parameters": sum(p.numel() for p in model.parameters()),
        "layers": {
            "hidden": layer(model.hidden),
            "policy": layer(model.policy),
            "value": layer(model.value),
        },
        "metrics": metrics,
        "training": {"steps": args.steps, "batch": args.batch, "seed": args.seed, "device": where},
    }


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    run_on = device(args.device)
    if run_on.type == "cpu":
        torch.use_deterministic_algorithms(True)
    model = ActorCritic().to(run_on)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    val_obs, val_action, val_reward = (torch.from_numpy(a).to(run_on) for a in market(rng, 4096))
    history: list[dict] = []
    for step in range(1, args.steps + 1):
        obs, action, reward = (torch.from_numpy(a).to(run_on) for a in market(rng, args.batch))
        logits, value = model(obs)
        loss = nn.functional.cross_entropy(logits, action) + 10.0 * nn.functional.mse_loss(
            value, reward
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0 or step == args.steps:
            history.append({"_step": step, "_timestamp": time.time(), "train/loss": float(loss)})
    with torch.no_grad():
        logits, value = model(val_obs)
        accuracy = float((logits.argmax(-1) == val_action).float().mean())
        rmse = float(torch.sqrt(nn.functional.mse_loss(value, val_reward)))
    metrics = {
        "validation/policy_accuracy": round(accuracy, 6),
        "validation/value_rmse": round(rmse, 6),
    }
    history.append({"_step": args.steps, "_timestamp": time.time(), **metrics})
    if args.metrics:
        Path(args.metrics).parent.mkdir(parents=True, exist_ok=True)
        Path(args.metrics).write_text("".join(json.dumps(row) + "\n" for row in history))
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(export(model, metrics, args, run_on.type), indent=1, sort_keys=True)
    out.write_text(text + "\n")
    print(json.dumps({"output": str(out), **metrics}))
    if accuracy < 0.98 or rmse > 0.04:
        raise SystemExit(
            f"quality gate failed: accuracy {accuracy:.4f} (>= 0.98), rmse {rmse:.4f} (<= 0.04)"
        )


if __name__ == "__main__":
    main()

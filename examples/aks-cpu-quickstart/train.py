"""A multi-interest retrieval model trained with Ray Train DDP on CPU workers.

Each user is represented by several interest vectors and scored against an item by its
best-matching interest; the loss is a sampled softmax over in-batch items. Launched by the
managed workflow contract (`train.py --manifest /manifest/<name>.yaml --smoke-pairs N`) or as
a direct RayJob entrypoint (`examples/cpu-multi-interest-ray`, named by TAU_RUN_NAME).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import yaml

USERS, ITEMS, DIM, INTERESTS = 512, 256, 32, 4


def train_loop(config: dict) -> None:
    import torch
    import torch.nn.functional as F
    from ray import train
    from ray.train.torch import prepare_model

    torch.manual_seed(7)
    context = train.get_context()
    rank, world = context.get_world_rank(), context.get_world_size()
    truth = torch.randn(ITEMS, DIM)
    users = torch.randn(USERS, DIM)
    affinity = users @ truth.T
    pairs = affinity.topk(4, dim=1).indices  # each user's four favourite items
    limit = max(config["smoke_pairs"], world) if config["smoke_pairs"] else USERS * 4
    data = [(u, int(i)) for u in range(USERS) for i in pairs[u]][:limit][rank::world]

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.users = torch.nn.Embedding(USERS, INTERESTS * DIM)
            self.items = torch.nn.Embedding(ITEMS, DIM)

        def forward(self, u: torch.Tensor) -> torch.Tensor:
            interests = self.users(u).view(-1, INTERESTS, DIM)
            scores = torch.einsum("bkd,nd->bkn", interests, self.items.weight)
            return scores.max(dim=1).values  # the best interest per item

    model = prepare_model(Model())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    for step in range(config["steps"]):
        batch = [data[(step * 64 + k) % len(data)] for k in range(64)]
        u = torch.tensor([b[0] for b in batch])
        target = torch.tensor([b[1] for b in batch])
        logits = model(u)
        loss = F.cross_entropy(logits, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        negatives = torch.randint(0, ITEMS, target.shape)
        gathered = logits.gather(1, torch.stack([target, negatives], 1))
        accuracy = (gathered[:, 0] > gathered[:, 1]).float().mean().item()
        print(f"rank={rank}/{world} step={step} loss={loss.item():.4f} pairwise_acc={accuracy:.3f}")
        train.report({"loss": loss.item(), "pairwise_accuracy": accuracy})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", default="")
    parser.add_argument("--smoke-pairs", type=int, default=0)
    args = parser.parse_args()
    if args.manifest:
        name = yaml.safe_load(Path(args.manifest).read_text())["name"]
    else:
        name = os.environ.get("TAU_RUN_NAME", "cpu-multi-interest-ray")

    import ray
    from ray.train import ScalingConfig
    from ray.train.torch import TorchTrainer

    ray.init()
    workers = int(os.environ.get("TAU_NUM_WORKERS", "1"))
    trainer = TorchTrainer(
        train_loop,
        train_loop_config={"steps": 48, "smoke_pairs": args.smoke_pairs},
        scaling_config=ScalingConfig(num_workers=workers, use_gpu=False),
    )
    result = trainer.fit()
    out = Path(os.environ.get("TAU_OUTPUT_DIR") or f"/tmp/{name}")
    out.mkdir(parents=True, exist_ok=True)
    final = {key: result.metrics[key] for key in ("loss", "pairwise_accuracy")}
    (out / "metrics.json").write_text(json.dumps(final))
    print(f"final metrics: {final}")


if __name__ == "__main__":
    main()

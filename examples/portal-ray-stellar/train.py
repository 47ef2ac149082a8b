"""portal-ray-stellar: a Ray job whose loss and accuracy land in the workspace store.

The workers compute each step's loss (`1 / (step + 1)`) in a STRICT_SPREAD placement group
(one bundle per worker, a GPU each when the cluster has them); the driver averages them and
writes one closed JSONL chunk per step under `$TAU_OUTPUT_DIR/metrics-history-attempt-N/`,
which the metrics-offload sidecar normalizes into the workspace store.
"""

from __future__ import annotations

import os
from pathlib import Path

import ray
from history import ChunkWriter
from ray.util.placement_group import placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy


@ray.remote
def step_loss(step: int) -> float:
    return 1.0 / (step + 1)


def main() -> None:
    steps = int(os.environ.get("PORTAL_DEMO_STEPS", "20"))
    workers = int(os.environ.get("TAU_NUM_WORKERS", "1"))
    attempt = os.environ.get("TAU_RETRY_ATTEMPT", "0")
    ray.init()
    gpus = 1 if ray.cluster_resources().get("GPU", 0) >= workers else 0
    bundle = {"CPU": 1, **({"GPU": 1} if gpus else {})}
    group = placement_group([dict(bundle) for _ in range(workers)], strategy="STRICT_SPREAD")
    ray.get(group.ready())
    writer = ChunkWriter(Path(os.environ["TAU_OUTPUT_DIR"]) / f"metrics-history-attempt-{attempt}")
    for step in range(steps):
        losses = ray.get(
            [
                step_loss.options(
                    num_gpus=gpus,
                    scheduling_strategy=PlacementGroupSchedulingStrategy(
                        placement_group=group, placement_group_bundle_index=index
                    ),
                ).remote(step)
                for index in range(workers)
            ]
        )
        loss = sum(losses) / len(losses)
        writer.write(step, {"loss": loss, "accuracy": 1.0 - loss})
        print(f"step {step}: loss={loss:.4f}", flush=True)
    print(f"portal-ray-stellar: wrote {steps} chunks", flush=True)


if __name__ == "__main__":
    main()

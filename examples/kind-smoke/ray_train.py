"""Kind smoke RayJob driver: run tasks on the Ray cluster's workers and print the marker.

The driver runs on the head (which KubeRay starts with no CPUs for tasks), so every task lands
on a worker; the tasks live in the sibling module smoke_tasks.py, shipped with
`run.working_dir`. The line printed last is what `tau logs` must show.
"""

import os

import ray
from smoke_tasks import where


def main() -> None:
    ray.init()
    hosts = sorted(set(ray.get([where.remote() for _ in range(8)])))
    resources = ray.cluster_resources()
    print(f"workers: {', '.join(hosts)}")
    print(f"cluster resources: CPU={resources.get('CPU', 0)} nodes={len(ray.nodes())}")
    print(os.environ.get("KIND_RAY_MARKER", "tau kind ray smoke complete"))


if __name__ == "__main__":
    main()

"""Tasks of the Kind smoke RayJob, a sibling module of ray_train.py.

It reaches the cluster only because the target ships this directory (`run.working_dir: .`)
as Ray's working_dir: the driver on the head imports it, and so does every worker that runs
one of its tasks.
"""

import socket

import ray


@ray.remote(num_cpus=0.1)
def where() -> str:
    return socket.gethostname()

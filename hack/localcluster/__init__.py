"""A real Kubernetes control plane as local processes: etcd, kube-apiserver, controller-manager,
scheduler, KWOK fake nodes, Kueue and the KubeRay operator, plus one real node (kubelet,
containerd, kube-proxy, CoreDNS in its own network namespace) and an image registry on 127.0.0.1.

Used by ``python -m hack.localcluster`` for developers and by the ``local_cluster`` pytest
fixture in ``tests/e2e``; both go through :func:`build` and :func:`start`.
"""

from .build import Artifacts, BuildError, build
from .cluster import ClusterError, LocalCluster, start, wait_until

__all__ = [
    "Artifacts",
    "BuildError",
    "ClusterError",
    "LocalCluster",
    "build",
    "start",
    "wait_until",
]

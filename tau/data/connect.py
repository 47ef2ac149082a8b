"""Choosing the registry a `tau data` verb works on: the workspace PVC or a local directory.

The default is the data PVC of the connected workspace, read and written by helper pods
created with the workspace connection's own identity (the same route `tau run get`
takes); nothing needs cluster-admin. `--registry file://DIR` works on a local directory
laid out like /data (a seed catalog, or the local engine's data root).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tau import keys
from tau.data.root import DirectoryRoot, Root, Scope
from tau.errors import UsageError

if TYPE_CHECKING:
    from tau.kube import KubeClient

PVC = "pvc"


def open_root(
    *,
    registry: str,
    scope: tuple[Scope, ...],
    pvc: str = keys.DEFAULT_PVC,
    context: str = "",
    namespace: str = "",
    cluster_flags: list[str] | None = None,
) -> Root:
    """`cluster_flags`: the cluster-selecting flags typed on the command line."""
    if registry in ("", PVC):
        from tau.connection import resolve_target

        target = resolve_target(context=context, namespace=namespace)
        return pvc_root(target.client(), target.namespace, pvc, scope)
    if registry.startswith("file://"):
        directory = registry[len("file://") :]
        if not directory:
            raise UsageError("--registry file URL must be file://DIR")
        if cluster_flags:
            verb = "selects" if len(cluster_flags) == 1 else "select"
            raise UsageError(
                f"--registry {registry} is a local directory, but {', '.join(cluster_flags)} "
                f"{verb} a cluster",
                hint="drop them, or drop --registry to use the workspace PVC",
            )
        path = Path(directory).expanduser()
        if path.exists() and not path.is_dir():
            raise UsageError(f"--registry {registry}: {path} is not a directory")
        return DirectoryRoot(path)
    if registry.startswith("az://"):
        raise UsageError(
            f"--registry {registry}: Azure Blob registries are not supported by this build",
            hint="use the workspace PVC (the default) or file://DIR",
        )
    raise UsageError("--registry must be 'pvc' or file://DIR")


def pvc_root(kube: KubeClient, namespace: str, pvc: str, scope: tuple[Scope, ...]) -> Root:
    """The registry on `pvc` in `namespace`, through helper pods (see `tau.data.podroot`)."""
    from tau.data.podroot import PodRoot

    return PodRoot(kube, namespace, pvc, scope)

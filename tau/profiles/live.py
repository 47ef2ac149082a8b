"""Reading the live TauCluster profile set, and the `tau cluster profiles export` capability."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tau.api.cluster import SINGLETON_NAME
from tau.errors import UsageError
from tau.kube.errors import AuthorizationError, NotFoundError
from tau.kube.resources import TAU_CLUSTERS
from tau.profiles.select import PLATFORM, ProfileSet, ProfileUnavailable, accept_status
from tau.profiles.snapshot import dump_snapshot, snapshot_from, write_snapshot

if TYPE_CHECKING:
    from tau.kube import KubeClient


def read_profile_set(client: KubeClient) -> ProfileSet:
    """The cluster's accepted profile set; every failure says which layer refused."""
    try:
        obj = client.get(TAU_CLUSTERS, SINGLETON_NAME)
    except NotFoundError as error:
        if error.resource_missing:
            raise ProfileUnavailable(
                "the TauCluster CRD is not installed on this cluster",
                hint="install TauGrid with `tau cluster install`",
                owner=PLATFORM,
            ) from None
        raise ProfileUnavailable(
            "TauCluster cluster does not exist", hint="the chart creates it", owner=PLATFORM
        ) from None
    except AuthorizationError:
        raise ProfileUnavailable(
            "you may not read TauCluster cluster (forbidden)",
            hint="ask the platform for get on clusters.tau.azure.com",
            owner=PLATFORM,
        ) from None
    return accept_status(obj)


def export_profiles(client: KubeClient, output: Path | None = None) -> str:
    """Export the ready revision as a snapshot; write it atomically to `output` if given.

    Returns the YAML text (what `tau cluster profiles export` prints without --output).
    """
    if output is not None and not Path(output).parent.is_dir():
        raise UsageError(f"--output {output}: directory {Path(output).parent} does not exist")
    snapshot = snapshot_from(read_profile_set(client))
    if output is not None:
        try:
            write_snapshot(snapshot, Path(output))
        except OSError as error:
            why = error.strerror or type(error).__name__
            raise UsageError(f"--output {output}: cannot write ({why})") from None
    return dump_snapshot(snapshot)

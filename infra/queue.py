"""The baseline queue: the chart's baseline queue objects, applied once the release's Kueue serves.

Kueue validates its ClusterQueue, ResourceFlavors and Topology through webhooks that only
serve once its controller runs, so a release that installs Kueue and creates those objects in
one `helm install` races the webhook on a fresh cluster. `tau cluster install` solves it with a
bootstrap pass; a stack does it in one `pulumi up` by ordering: the release is installed with
`baselineQueue.enabled=false` and waited on until its workloads are ready, then the queue
objects, rendered by the same chart template from the same values (`helm template
--show-only`), are applied as resources that depend on it. Teardown runs in reverse, which is
the drain the uninstall contract requires: the queue objects are deleted (and Kueue clears
their resource-in-use finalizers) while Kueue still runs, and only then is the release removed.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi
import yaml

from infra.platform_values import RELEASE_NAME, SYSTEM_NAMESPACE, deep_merge
from tau.cluster.chart import ChartRef, renderable

QUEUE_TEMPLATE = "templates/baseline-queue.yaml"
MANAGED_BY = "app.kubernetes.io/managed-by"
DELETE_TIMEOUT_SECONDS = 10 * 60
"""How long a queue object may keep Kueue's resource-in-use finalizer (an admitted workload)."""


class QueueRenderError(Exception):
    """helm could not render the baseline queue template."""


def render_queue_objects(
    chart: str, version: str | None, values: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The objects the chart's baseline-queue template renders for `values`, via real helm.

    The template reads only `baselineQueue`; the third-party sub-charts are switched off for
    this render so a checkout chart renders without them vendored.
    """
    offline = {"components": {"kueue": {"enabled": False}, "kuberayOperator": {"enabled": False}}}
    with tempfile.TemporaryDirectory(prefix="taugrid-queue-") as tmp:
        values_file = Path(tmp) / "values.yaml"
        values_file.write_text(yaml.safe_dump(deep_merge(values, offline)))
        with renderable(ChartRef(chart, version or "")) as reference:
            args = ["helm", "template", RELEASE_NAME, reference, "--namespace", SYSTEM_NAMESPACE]
            args += ["--show-only", QUEUE_TEMPLATE, "-f", str(values_file)]
            if version and ChartRef(chart).local_dir is None:
                args += ["--version", version]
            try:
                done = subprocess.run(args, capture_output=True, text=True, timeout=300)
            except OSError as error:
                raise QueueRenderError(f"cannot run helm: {error}") from None
    if done.returncode != 0:
        raise QueueRenderError(done.stderr.strip() or f"helm exited {done.returncode}")
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def _managed_by_pulumi(obj: Mapping[str, Any]) -> dict[str, Any]:
    # Rendered by helm but owned by the stack: the label must not claim a Helm release.
    metadata = dict(obj.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), MANAGED_BY: "pulumi"}
    return {**obj, "metadata": metadata}


REFERENCE_ORDER = ("Topology", "ResourceFlavor", "ClusterQueue", "LocalQueue")


def _rank(obj: Mapping[str, Any]) -> int:
    """Position in the reference chain; -1 for objects nothing references (priority classes)."""
    kind = obj["kind"]
    return REFERENCE_ORDER.index(kind) if kind in REFERENCE_ORDER else -1


def resource_name(obj: Mapping[str, Any]) -> str:
    return f"{obj['kind'].lower()}-{obj['metadata']['name']}"


class KubernetesObject(pulumi.CustomResource):
    """Any rendered object, registered under the provider's `kubernetes:<apiVersion>:<kind>`
    type: WorkloadPriorityClass and PriorityClass carry top-level fields that the typed
    CustomResource (spec only) cannot express."""

    def __init__(
        self, name: str, obj: Mapping[str, Any], opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(f"kubernetes:{obj['apiVersion']}:{obj['kind']}", name, dict(obj), opts)


def apply_queue_objects(
    name: str,
    objects: list[dict[str, Any]],
    release: pulumi.Resource,
    opts: pulumi.ResourceOptions,
) -> list[pulumi.Resource]:
    """Register the rendered queue objects (children per `opts`), each after the release.

    A ResourceFlavor names the Topology, a ClusterQueue its flavors, a LocalQueue its
    ClusterQueue, and Kueue keeps a referenced object's resource-in-use finalizer: each object
    waits for the kinds it references, so teardown deletes referrers first.
    """
    placed = pulumi.ResourceOptions.merge(
        opts,
        pulumi.ResourceOptions(
            depends_on=[release],
            custom_timeouts=pulumi.CustomTimeouts(delete=f"{DELETE_TIMEOUT_SECONDS}s"),
        ),
    )
    by_rank: dict[int, list[pulumi.Resource]] = {}
    for obj in sorted(objects, key=_rank):
        rank = _rank(obj)
        referenced = [res for lower, items in by_rank.items() if 0 <= lower < rank for res in items]
        by_rank.setdefault(rank, []).append(
            KubernetesObject(
                f"{name}-{resource_name(obj)}",
                _managed_by_pulumi(obj),
                opts=pulumi.ResourceOptions.merge(
                    placed, pulumi.ResourceOptions(depends_on=referenced)
                ),
            )
        )
    return [res for items in by_rank.values() for res in items]

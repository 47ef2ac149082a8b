"""TauGridPlatform: installs the TauGrid chart onto any Kubernetes provider.

By default that is `charts/taugrid-bundle`, the published chart (charts/taugrid plus the
pinned Kueue and KubeRay charts, fetched at install time); a stack whose cluster already runs
both (the `dev` stack) installs `charts/taugrid`, which has nothing to fetch.

AKS stacks hand it the provider built from the new cluster's kubeconfig; the `dev` stack hands
it one for an existing context. Either way the install is one Helm release named `taugrid` in
`tau-system`, the same release `tau cluster install|validate|uninstall` find and manage, and it
waits for the release's workloads to become ready so dependents (the bootstrap workspace) are
ordered after a platform that actually runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from infra.platform_values import (
    RELEASE_NAME,
    SYSTEM_NAMESPACE,
    queue_after_release,
    without_queue,
)
from infra.queue import QueueRenderError, apply_queue_objects, render_queue_objects
from tau.cluster.chart import read_chart_yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PROGRAM_DIR = PROJECT_ROOT / "infra"
"""Pulumi.yaml's `main`: the engine starts the providers there, so a relative chart path in the
release's inputs is resolved from it."""
INSTALL_TIMEOUT_SECONDS = 20 * 60


def is_repository_chart(chart: str) -> bool:
    return "://" in chart


def fetches_dependencies(chart: str) -> bool:
    """Whether a checkout chart declares a dependency from a repository (Kueue, KubeRay), so
    Helm must fetch it (dependency_update); first-party sub-charts are already in charts/."""
    meta = read_chart_yaml(PROJECT_ROOT / chart)
    return any(dep.get("repository") for dep in meta.get("dependencies") or [])


def chart_reference(chart: str) -> str:
    """A repository reference unchanged; a checkout path relative to the program directory.

    Relative, because the path is stored in the release's inputs: an absolute path would make
    every operator's checkout location show up as a diff.
    """
    if is_repository_chart(chart):
        return chart
    return os.path.relpath(PROJECT_ROOT / chart, PROGRAM_DIR)


@dataclass(frozen=True)
class TauGridPlatformArgs:
    provider: k8s.Provider
    values: pulumi.Input[dict]
    chart: str = "charts/taugrid-bundle"
    version: str | None = None
    """Used for repository charts only; a checkout chart carries its version in Chart.yaml."""
    precreate_namespaces: tuple[str, ...] = ()
    """Namespaces the chart renders namespaced RBAC into (the lifecycle recorder's target)."""
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    queue_values: dict[str, Any] | None = None
    """The values as plain data when they are known at registration (every stack's baseline
    queue settings are): decides whether the queue waits for the release (infra/queue.py)."""


class TauGridPlatform(pulumi.ComponentResource):
    release_name: pulumi.Output[str]
    namespace: pulumi.Output[str]
    release: k8s.helm.v3.Release

    def __init__(
        self, name: str, args: TauGridPlatformArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("taugrid:infra:TauGridPlatform", name, None, opts)
        on_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider)

        namespaces = [
            k8s.core.v1.Namespace(
                f"{name}-namespace-{namespace}",
                metadata={"name": namespace},
                # A workspace namespace holds researchers' workloads: removing it from the stack
                # must never delete it (the workspace lifecycle owns that decision).
                opts=pulumi.ResourceOptions.merge(
                    on_cluster,
                    pulumi.ResourceOptions(depends_on=args.depends_on, retain_on_delete=True),
                ),
            )
            for namespace in args.precreate_namespaces
        ]

        repository = is_repository_chart(args.chart)
        chart = chart_reference(args.chart)
        version = args.version if repository else None
        split = args.queue_values is not None and queue_after_release(args.queue_values)
        values = (
            pulumi.Output.from_input(args.values).apply(without_queue) if split else args.values
        )
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=RELEASE_NAME,
            namespace=SYSTEM_NAMESPACE,
            create_namespace=True,
            chart=chart,
            version=version,
            # The checkout bundle declares Kueue and KubeRay without vendoring them (the
            # fetched archives and Chart.lock are git-ignored); a packaged repository chart
            # already contains them.
            dependency_update=not repository and fetches_dependencies(args.chart),
            values=values,
            timeout=INSTALL_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions.merge(
                on_cluster, pulumi.ResourceOptions(depends_on=[*args.depends_on, *namespaces])
            ),
        )
        if split and args.queue_values is not None:
            try:
                source = chart if repository else str(PROJECT_ROOT / args.chart)
                objects = render_queue_objects(source, version, args.queue_values)
            except QueueRenderError as error:
                raise pulumi.RunError(
                    f"rendering the baseline queue of {args.chart} failed: {error}"
                ) from None
            apply_queue_objects(f"{name}-queue", objects, self.release, on_cluster)
        self.release_name = self.release.name
        self.namespace = self.release.namespace
        self.register_outputs({"release_name": self.release_name, "namespace": self.namespace})

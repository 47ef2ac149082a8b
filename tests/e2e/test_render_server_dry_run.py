"""Rendered objects pass the real API server, Kueue's webhooks and KubeRay's CRD (dry-run).

Server-side dry-run runs defaulting, validation, admission webhooks and CRD structural
pruning without persisting anything, which is exactly the contract rendering must meet.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tau.render import render
from tau.resolve.direct import resolve_run
from tau.resolve.layers import ConfigLayer, Overrides, WorkspaceLayer
from tau.runconfig import load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGETS = {
    "quickstart-job": EXAMPLES / "quickstart/tau/train.yaml",
    "torchrun-2x4": EXAMPLES / "torchrun/tau/train.yaml",
    "rayjob-2x8-tune": EXAMPLES / "quickstart/tau/ray-tune.yaml",
}


def rendered(path: Path, namespace: str) -> list[dict]:
    resolution = resolve_run(
        ConfigLayer(load(path)),
        overrides=Overrides(namespace=namespace, service_account="default", dry_run="client"),
        new_id=lambda: "0" * 24,
    )
    return render(resolution.intent)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_server_dry_run_accepts_the_rendered_objects_unchanged(local_cluster, namespace, target):
    objects = rendered(TARGETS[target], namespace)
    result = local_cluster.kubectl(
        "create",
        "-n",
        namespace,
        "--dry-run=server",
        "-o",
        "yaml",
        "-f",
        "-",
        input=yaml.safe_dump_all(objects),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    items = [doc for doc in yaml.safe_load_all(result.stdout) if doc]
    assert [item["kind"] for item in items] == [obj["kind"] for obj in objects]
    for sent, accepted in zip(objects, items, strict=True):
        # Defaults may be added, but nothing we render may be pruned or rewritten.
        assert lost(sent, accepted) == []


def lost(sent, accepted, path: str = "") -> list[str]:
    """Paths of rendered values the server dropped or changed."""
    if isinstance(sent, dict):
        if not isinstance(accepted, dict):
            return [path]
        return [
            missing
            for key, value in sent.items()
            for missing in (
                lost(value, accepted[key], f"{path}.{key}")
                if key in accepted
                else [f"{path}.{key}"]
            )
        ]
    if isinstance(sent, list):
        if not isinstance(accepted, list) or len(accepted) != len(sent):
            return [path]
        return [m for i, item in enumerate(sent) for m in lost(item, accepted[i], f"{path}[{i}]")]
    return [] if sent == accepted else [f"{path}: {sent!r} != {accepted!r}"]


def restricted_namespace(cluster, namespace: str) -> None:
    """As the controller labels a workspace namespace it creates (the chart's default)."""
    cluster.kubectl(
        "label", "namespace", namespace, "--overwrite",
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/warn=restricted",
    )  # fmt: skip


def pods_of(objects: list[dict]) -> list[dict]:
    """Every pod template rendered (a Job's, a RayJob's head and workers) as a Pod: PodSecurity
    admission only checks built-in workloads' templates, and none of a RayJob's."""
    templates = []
    for obj in objects:
        spec = obj.get("spec") or {}
        if obj["kind"] == "Job":
            templates.append(spec["template"])
        elif obj["kind"] == "RayJob":
            cluster = spec["rayClusterSpec"]
            templates.append(cluster["headGroupSpec"]["template"])
            templates += [group["template"] for group in cluster.get("workerGroupSpecs") or []]
    return [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"pod-{i}"}, "spec": t["spec"]}
        for i, t in enumerate(templates)
    ]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_rendering_for_a_restricted_workspace_passes_pod_security_restricted(
    local_cluster, namespace, target
):
    """Every pod the run would create is admitted by a namespace enforcing restricted."""
    restricted_namespace(local_cluster, namespace)
    resolution = resolve_run(
        ConfigLayer(load(TARGETS[target])),
        overrides=Overrides(namespace=namespace, service_account="default", dry_run="client"),
        workspace=WorkspaceLayer(name="e2e", namespace=namespace, pod_security="restricted"),
        new_id=lambda: "0" * 24,
    )
    objects = render(resolution.intent)

    def dry_run(docs: list[dict]):
        return local_cluster.kubectl(
            "create", "-n", namespace, "--dry-run=server", "-o", "name", "-f", "-",
            input=yaml.safe_dump_all(docs), check=False,
        )  # fmt: skip

    accepted = dry_run(objects + pods_of(objects))
    assert accepted.returncode == 0, accepted.stderr
    assert "PodSecurity" not in accepted.stderr, accepted.stderr
    # The same target rendered without restricted mode is refused: the check can fail.
    refused = dry_run(pods_of(rendered(TARGETS[target], namespace)))
    assert 'violates PodSecurity "restricted:latest"' in refused.stderr

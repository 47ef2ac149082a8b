"""Rendered objects pass the real API server, Kueue's webhooks and KubeRay's CRD (dry-run).

Server-side dry-run runs defaulting, validation, admission webhooks and CRD structural
pruning without persisting anything, which is exactly the contract rendering must meet.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tau.render import render
from tau.resolve.layers import ConfigLayer, Overrides, resolve_run
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

"""The chart's default profile catalog admits a default install's CPU runs, fail-closed.

The catalog is read from the chart's values, its status computed by the real controller code,
and the `tau workspace init-repo` CPU target and the platform guide's CPU smoke example are
resolved and rendered against the profile `tau` selects.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from controller.world import kueue_world

from tau.controller.conditions import condition
from tau.controller.profiles import resolve_profile_set
from tau.errors import ValidationError
from tau.profiles.select import accept_status
from tau.render import render
from tau.resolve.direct import resolve_run
from tau.resolve.layers import ConfigLayer, Overrides
from tau.resolve.profile import profile_layer
from tau.runconfig import load
from tau.workspace.scaffold import ScaffoldRequest, files

ROOT = Path(__file__).resolve().parents[3]
VALUES = ROOT / "charts/taugrid/charts/tau-core-controller/values.yaml"
NAMESPACE = "taugrid-default"


@pytest.fixture(scope="module")
def catalog():
    spec = {
        "workloadProfiles": yaml.safe_load(VALUES.read_text())["tauCluster"]["workloadProfiles"]
    }
    world = kueue_world(namespaces=(NAMESPACE, "elsewhere"))
    multikueue = condition("MultiKueueReady", False, "PrerequisitesNotReady", "", 1)
    status, ready = resolve_profile_set(spec, world, multikueue, 1, None)
    cluster = {
        "metadata": {"name": "cluster", "generation": 1},
        "spec": spec,
        "status": {"workloadProfiles": status, "conditions": [ready]},
    }
    return accept_status(cluster)


def resolved(path: Path, catalog):
    selection = catalog.select(namespace=NAMESPACE)
    resolution = resolve_run(
        ConfigLayer(load(path)),
        overrides=Overrides(namespace=NAMESPACE, dry_run="client"),
        profile=profile_layer(selection),
        new_id=lambda: "0" * 24,
    )
    return selection, render(resolution.intent)


def test_without_team_or_lane_the_default_namespace_selects_the_cpu_profile(catalog):
    assert catalog.select(namespace=NAMESPACE).name == "azure.default.cpu"


def test_the_scaffolds_cpu_targets_are_admitted(tmp_path: Path, catalog):
    request = ScaffoldRequest(name="vision", output=tmp_path, image="registry.example/v:1")
    for rel, text in files(request).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    for target in ("smoke", "train"):
        selection, (job,) = resolved(tmp_path / "tau" / f"{target}.yaml", catalog)
        assert job["kind"] == "Job"
        assert job["metadata"]["annotations"]["tau.azure.com/workload-profile"] == selection.name
        assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "jobqueue"


def test_the_platform_guides_smoke_example_is_admitted(catalog):
    _, (rayjob,) = resolved(ROOT / "examples/cpu-multi-interest-ray/tau.yaml", catalog)
    assert rayjob["kind"] == "RayJob"
    assert rayjob["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "jobqueue"


def test_fail_closed_rules_stay_intact(catalog):
    with pytest.raises(ValidationError, match="no ready workload profile"):
        catalog.select(namespace="elsewhere")
    with pytest.raises(ValidationError, match="does not apply here"):
        catalog.select("azure.research.training.l", namespace=NAMESPACE)

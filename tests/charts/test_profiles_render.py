"""Every documented values profile lints cleanly and renders only schema-valid objects.

Built-in kinds are checked against the Kubernetes 1.30 OpenAPI schema (the chart's minimum),
Kueue kinds against the Kueue CRDs of the version the local cluster runs, and the TauCluster
against the CRD shipped in the chart and the pydantic model it is generated from.
"""

from __future__ import annotations

import subprocess

import jsonschema
import kubernetes_validate
import pytest

from tau.api.cluster import TauCluster
from tau.cluster.chart import ChartRef, renderable

from .conftest import CHART, OFFLINE, PROFILES

MIN_KUBERNETES = "1.30.0"


@pytest.mark.parametrize("profile", PROFILES)
def test_helm_lint_is_clean(helm, profile):
    args = ["lint", "", "--namespace", "tau-system", "--strict"]
    if PROFILES[profile]:
        args += ["-f", str(PROFILES[profile])]
    for item in OFFLINE:
        args += ["--set", item]
    with renderable(ChartRef(str(CHART))) as chart:
        args[1] = chart
        done = subprocess.run([helm, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[ERROR]" not in done.stdout and "[WARNING]" not in done.stdout, done.stdout


@pytest.mark.parametrize("profile", PROFILES)
def test_rendered_objects_validate_against_their_schemas(
    render, kueue_schemas, tau_schemas, profile
):
    objects = render(values=PROFILES[profile], include_crds=True)
    kinds = {obj["kind"] for obj in objects}
    assert {"CustomResourceDefinition", "Deployment", "TauCluster"} <= kinds
    for obj in objects:
        key = (obj["apiVersion"], obj["kind"])
        if key in kueue_schemas:
            jsonschema.validate(obj, kueue_schemas[key])
        elif key in tau_schemas:
            jsonschema.validate(obj, tau_schemas[key])
            TauCluster.model_validate(obj)
        else:
            kubernetes_validate.validate(obj, MIN_KUBERNETES, strict=True)


def test_schema_validation_is_not_vacuous(kueue_schemas):
    bad_queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "q"},
        "spec": {"queueingStrategy": "Random"},
    }
    with pytest.raises(jsonschema.ValidationError, match="Random"):
        jsonschema.validate(bad_queue, kueue_schemas[("kueue.x-k8s.io/v1beta2", "ClusterQueue")])


@pytest.mark.parametrize(
    ("profile", "flavors", "gpu_quota"),
    [
        ("default", ["taugrid-default-cpu", "taugrid-default-gpu"], ["0", "1000"]),
        ("cpu-only", ["taugrid-default-cpu"], []),
        ("h200-pool", ["taugrid-default-cpu", "h200-pool"], ["0", "8"]),
        ("a100-pool", ["taugrid-default-cpu", "a100-pool"], ["0", "1"]),
    ],
)
def test_profiles_shape_the_cluster_queue(render, profile, flavors, gpu_quota):
    (queue,) = [o for o in render(values=PROFILES[profile]) if o["kind"] == "ClusterQueue"]
    (group,) = queue["spec"]["resourceGroups"]
    assert [f["name"] for f in group["flavors"]] == flavors
    quotas = [
        r["nominalQuota"]
        for f in group["flavors"]
        for r in f["resources"]
        if r["name"] == "nvidia.com/gpu"
    ]
    assert quotas == gpu_quota


def test_cpu_only_profile_renders_no_gpu_monitoring(render):
    objects = render(values=PROFILES["cpu-only"])
    assert not [o for o in objects if o["kind"] == "DaemonSet"]
    assert not [o for o in objects if o["kind"] == "Topology"]


def test_class_specific_profiles_label_gpu_flavors_with_the_canonical_class(render):
    for profile, gpu_class in (("h200-pool", "h200-141gb"), ("a100-pool", "a100-80gb")):
        flavors = [o for o in render(values=PROFILES[profile]) if o["kind"] == "ResourceFlavor"]
        gpu = [f for f in flavors if f["spec"].get("nodeTaints")]
        assert [f["spec"]["nodeLabels"]["tau.azure.com/gpu-class"] for f in gpu] == [gpu_class]


def test_multikueue_profile_adds_one_multikueue_workload_profile(render):
    (cluster,) = [o for o in render(values=PROFILES["multikueue"]) if o["kind"] == "TauCluster"]
    targets = [p["executionTarget"] for p in cluster["spec"]["workloadProfiles"]]
    assert targets.count("multiKueue") == 1
    assert targets.count("singleCluster") == 16

"""The values each stack hands `charts/taugrid` are accepted by the chart and render with helm.

The documents come from the mock-engine run of the real program, i.e. exactly what the
`taugrid` Helm release would receive; they are checked against the chart's values.schema.json
and rendered with the real `helm template`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
import yaml
from infra_mocks import ROOT, SUBSCRIPTION, run_stack

from infra.platform_values import PlatformValues, deep_merge, taugrid_values

CHART = ROOT / "charts" / "taugrid"
# Kueue and KubeRay are pinned OCI dependencies the checkout does not vendor and this machine
# cannot fetch; the render covers every first-party template with both switched off.
THIRD_PARTY_DEPENDENCIES = {"kueue", "kuberay-operator"}
OFFLINE = {"components": {"kueue": {"enabled": False}, "kuberayOperator": {"enabled": False}}}

STACKS = ("aks-cpu", "aks-gpu", "aks-h200", "ci-preview", "dev")
VARIANTS = {
    "managed-gpu-preview": {
        "subscription_id": SUBSCRIPTION,
        "gpu_stack_mode": "aks_managed_preview",
    },
    "adx-without-recorder": {"subscription_id": SUBSCRIPTION, "enable_adx": True},
}
CASES = sorted([*STACKS, *VARIANTS])


def helm() -> str:
    found = shutil.which("helm") or str(ROOT / ".venv" / "bin" / "helm")
    if not Path(found).exists():
        raise AssertionError("helm is not installed: run hack/setup/10-helm.sh")
    return found


def _integral(value):
    # The engine carries numbers as doubles; the provider hands Helm integral ones as integers.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _integral(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral(item) for item in value]
    return value


@pytest.fixture(scope="module")
def release_values(runs) -> dict[str, dict]:
    values = {}
    for case in CASES:
        run = runs(case) if case in STACKS else run_stack(VARIANTS[case], stack=case)
        values[case] = _integral(run.named("platform-release").inputs["values"])
    return values


@pytest.fixture(scope="module")
def queue_objects(runs) -> dict[str, list[dict]]:
    """The baseline queue objects a stack applies after its release (infra/queue.py)."""
    return {
        case: [
            item.inputs
            for item in runs(case).registrations
            if item.name.startswith("platform-queue-")
        ]
        for case in STACKS
    }


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads((CHART / "values.schema.json").read_text())


@pytest.fixture(scope="module")
def chart_defaults() -> dict:
    return yaml.safe_load((CHART / "values.yaml").read_text())


def validate(values: dict, schema: dict, defaults: dict) -> None:
    """Helm's check: the schema applies to the chart defaults coalesced with the user values."""
    validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    validator(schema).validate(deep_merge(defaults, values))


@pytest.fixture(scope="module")
def offline_chart(tmp_path_factory) -> Path:
    """A copy of the chart without the unfetchable third-party dependencies."""
    copy = tmp_path_factory.mktemp("chart") / "taugrid"
    shutil.copytree(CHART, copy, ignore=shutil.ignore_patterns("*.tgz"))
    chart = yaml.safe_load((copy / "Chart.yaml").read_text())
    chart["dependencies"] = [
        dep for dep in chart.get("dependencies", []) if dep["name"] not in THIRD_PARTY_DEPENDENCIES
    ]
    (copy / "Chart.yaml").write_text(yaml.safe_dump(chart, sort_keys=False))
    (copy / "Chart.lock").unlink(missing_ok=True)
    return copy


def render(chart: Path, values: dict, tmp_path: Path) -> list[dict]:
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(deep_merge(values, OFFLINE)))
    result = subprocess.run(
        [
            helm(),
            "template",
            "taugrid",
            str(chart),
            "--namespace",
            "tau-system",
            "-f",
            str(values_file),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.mark.parametrize("case", CASES)
def test_values_validate_against_the_chart_schema(release_values, schema, chart_defaults, case):
    validate(release_values[case], schema, chart_defaults)


def test_the_schema_check_is_not_vacuous(schema, chart_defaults):
    # The chart's schema rejects keys it does not know: a misspelt key fails this suite.
    bad = taugrid_values(PlatformValues(workspace_namespace="ns"))
    bad["taugrid-core"]["portal"]["serviceAcount"] = {}
    with pytest.raises(jsonschema.ValidationError, match="serviceAcount"):
        validate(bad, schema, chart_defaults)


@pytest.mark.parametrize("case", CASES)
def test_values_render_with_helm(release_values, offline_chart, tmp_path, case):
    documents = render(offline_chart, release_values[case], tmp_path)
    kinds = {doc["kind"] for doc in documents}
    assert "Deployment" in kinds


def _one(documents: list[dict], kind: str, name: str) -> dict:
    found = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} rendered"
    return found[0]


def test_gpu_stack_renders_the_gpu_flavor_and_its_quota(
    release_values, queue_objects, offline_chart, tmp_path
):
    documents = render(offline_chart, release_values["aks-h200"], tmp_path)
    assert not [d for d in documents if d["kind"] in ("ClusterQueue", "ResourceFlavor")]
    documents += queue_objects["aks-h200"]
    flavor = _one(documents, "ResourceFlavor", "taugrid-h200")
    assert flavor["spec"]["nodeLabels"]["tau.azure.com/gpu-class"] == "h200-141gb"
    assert flavor["spec"]["nodeTaints"] == [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]
    [queue] = [d for d in documents if d["kind"] == "ClusterQueue"]
    gpu_quota = {
        resource["name"]: resource["nominalQuota"]
        for group in queue["spec"]["resourceGroups"]
        for flavor_quota in group["flavors"]
        if flavor_quota["name"] == "taugrid-h200"
        for resource in flavor_quota["resources"]
    }
    assert gpu_quota["nvidia.com/gpu"] == "8"


def test_cpu_stack_renders_no_gpu_flavor(release_values, queue_objects, offline_chart, tmp_path):
    documents = (
        render(offline_chart, release_values["aks-cpu"], tmp_path) + queue_objects["aks-cpu"]
    )
    flavors = [d["metadata"]["name"] for d in documents if d["kind"] == "ResourceFlavor"]
    assert flavors == ["taugrid-default-cpu"]


def test_recorder_service_account_is_the_federated_subject(release_values, offline_chart, tmp_path):
    documents = render(offline_chart, release_values["ci-preview"], tmp_path)
    account = _one(documents, "ServiceAccount", "tau-lifecycle-recorder")
    assert account["metadata"]["namespace"] == "tau-system"
    assert account["metadata"]["annotations"]["azure.workload.identity/client-id"] == (
        "client-id-of-taugrid-lifecycle-recorder"
    )
    portal = _one(documents, "ServiceAccount", "tau-portal")
    assert portal["metadata"]["annotations"]["azure.workload.identity/client-id"] == (
        "client-id-of-taugrid-portal-adx"
    )


def _args(documents: list[dict], name: str) -> list[str]:
    deployment = _one(documents, "Deployment", name)
    return deployment["spec"]["template"]["spec"]["containers"][0]["args"]


def _flag(args: list[str], name: str) -> str:
    return next(arg.split("=", 1)[1] for arg in args if arg.startswith(f"--{name}="))


def test_the_portal_reads_run_history_from_the_table_the_recorder_ingests_into(
    release_values, offline_chart, tmp_path
):
    documents = render(offline_chart, release_values["ci-preview"], tmp_path)
    portal, recorder = _args(documents, "tau-portal"), _args(documents, "tau-lifecycle-recorder")
    assert _flag(portal, "source") == "kusto"
    assert _flag(portal, "kusto-endpoint") == _flag(recorder, "kusto-endpoint")
    assert _flag(portal, "kusto-database") == _flag(recorder, "kusto-database")
    assert _flag(portal, "run-history-table") == _flag(recorder, "kusto-table")


def test_without_a_recorder_the_portal_keeps_the_local_history_source(
    release_values, offline_chart, tmp_path
):
    documents = render(offline_chart, release_values["adx-without-recorder"], tmp_path)
    assert _flag(_args(documents, "tau-portal"), "source") == "local"


def test_an_adx_stack_publishes_its_logs_database_to_every_workspace(
    runs, release_values, offline_chart, tmp_path
):
    """The controller the release runs is told the stack's ADX endpoint, its Logs database and
    the AKS name (adx-mon's cluster), which it writes as each workspace's tau-log-connection."""
    from tau.controller.__main__ import parse
    from tau.lifecycle.offload import LogOffload

    outputs = runs("ci-preview").outputs
    documents = render(offline_chart, release_values["ci-preview"], tmp_path)
    assert parse(_args(documents, "tau-core-controller")).log_offload == LogOffload(
        outputs["cluster_name"], outputs["adx_endpoint"], "Logs"
    )


@pytest.mark.parametrize("case", ["aks-gpu", "dev"])
def test_a_stack_without_adx_publishes_no_log_connection(
    release_values, offline_chart, tmp_path, case
):
    args = _args(render(offline_chart, release_values[case], tmp_path), "tau-core-controller")
    assert not [arg for arg in args if arg.startswith("--log-offload-")]

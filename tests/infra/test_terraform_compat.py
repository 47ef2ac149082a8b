"""terraform-compat: upstream tfvars become stack files that pass the same program and tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from infra_mocks import ROOT, run_stack
from tfcompat.convert import convert, read_tfvars, write_stack_file
from tfcompat.mapping import MAPPINGS, import_file, placeholders

from infra.config import (
    MSG_ADX_CLUSTER_NAME,
    MSG_CLUSTER_NAME,
    StackConfigError,
    adx_cluster_name,
    parse_stack_config,
    settings_from_stack_file,
)
from tau.errors import ValidationError

SAMPLES = Path(__file__).parent / "tfvars"


def converted(sample: str):
    return convert(read_tfvars((SAMPLES / sample).read_text(), sample))


def round_trip(sample: str, tmp_path: Path):
    config, _ = converted(sample)
    path = write_stack_file(config, "lab", tmp_path, sample)
    document = yaml.safe_load(path.read_text())
    return config, parse_stack_config(settings_from_stack_file(document)), path


@pytest.mark.parametrize("sample", ["example.tfvars", "full-cluster.tfvars", "legacy.tfvars"])
def test_stack_file_round_trip_preserves_every_setting(sample, tmp_path):
    original, reloaded, _ = round_trip(sample, tmp_path)
    assert reloaded == original


def test_example_tfvars_keeps_names_and_values(tmp_path):
    _, config, path = round_trip("example.tfvars", tmp_path)
    assert config.subscription_id == "00000000-0000-0000-0000-0000000000bb"
    assert config.cluster_name == "taugrid-lab"
    assert config.aks_admin_group_object_ids == ["22222222-3333-4444-5555-666666666666"]
    assert config.command_interpreter == ["bash", "-c"]
    assert config.adx_cluster_name == "taugridlabadx"
    text = path.read_text()
    assert "taugrid:resource_group_name: rg-taugrid-lab" in text
    assert "taugrid:gpu_node_count: 1" in text
    assert "# Converted from example.tfvars" in text


def test_converted_example_passes_the_stack_tests(tmp_path, caplog):
    _, _, path = round_trip("example.tfvars", tmp_path)
    run = run_stack(settings_from_stack_file(yaml.safe_load(path.read_text())), stack="lab")
    # Terraform-only settings are kept for a faithful round trip, and flagged as inert.
    assert "command_interpreter has no effect here" in caplog.text
    names = {item.name for item in run.registrations}
    assert {"gpu-pool", "gpu-device-plugin", "gpu-mig-normalizer", "gpu-dcgm-exporter"} <= names
    assert "adx-taugrid-portal-viewer" in names
    assert "lifecycle-recorder-identity" not in names
    assert run.outputs["adx_cluster_name"] == "taugridlabadx"
    assert run.outputs["get_credentials_command"] == (
        "az aks get-credentials --admin --subscription 00000000-0000-0000-0000-0000000000bb "
        "--resource-group rg-taugrid-lab --name taugrid-lab --overwrite-existing"
    )


def test_converted_full_cluster_generates_the_adx_name_and_bootstraps(tmp_path):
    _, config, path = round_trip("full-cluster.tfvars", tmp_path)
    assert config.tenant_id is None
    assert "tenant_id" not in path.read_text()  # Pulumi config has no null
    run = run_stack(settings_from_stack_file(yaml.safe_load(path.read_text())), stack="full")
    assert run.outputs["adx_cluster_name"] == adx_cluster_name(
        "00000000-0000-0000-0000-0000000000cc", "rg-taugrid-full", "taugrid-full"
    )
    pool = run.named("gpu-pool").inputs
    assert pool["tags"]["EnableManagedGPUExperience"] == "true"
    names = {item.name for item in run.registrations}
    assert "bootstrap-workspace-workspace" in names
    assert "adx-taugrid-lifecycle-recorder-ingestor" in names
    assert "gpu-device-plugin" not in names


def test_retired_variables_are_dropped_with_a_note():
    config, notes = converted("legacy.tfvars")
    assert notes == [
        "dropped enable_portal: Portal is always installed; the variable was removed upstream"
    ]
    assert config.enable_gpu is False
    assert config.adx_sku_name == "Dev(No SLA)_Standard_D11_v2"


def test_placeholders_fail_with_the_terraform_messages():
    with pytest.raises(StackConfigError) as caught:
        converted("placeholders.tfvars")
    assert sorted(caught.value.all_problems) == sorted([MSG_CLUSTER_NAME, MSG_ADX_CLUSTER_NAME])


def test_expressions_are_not_tfvars():
    with pytest.raises(ValidationError, match="cluster_name: tfvars values must be literals"):
        read_tfvars('cluster_name = "${var.prefix}-aks"\n')


def test_invalid_hcl_names_the_file():
    with pytest.raises(ValidationError, match=r"^broken.tfvars: not valid HCL"):
        read_tfvars("cluster_name = = \n", "broken.tfvars")


def test_an_existing_stack_file_is_never_overwritten_silently(tmp_path):
    config, _ = converted("example.tfvars")
    path = write_stack_file(config, "lab", tmp_path, "example.tfvars")
    before = path.read_text()
    other, _ = converted("legacy.tfvars")
    with pytest.raises(Exception, match="exists"):
        write_stack_file(other, "lab", tmp_path, "legacy.tfvars")
    assert path.read_text() == before
    write_stack_file(other, "lab", tmp_path, "legacy.tfvars", force=True)
    assert "taugrid-legacy" in path.read_text()


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "terraform-compat"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def test_cli_converts_and_points_at_the_preview(tmp_path):
    result = cli(
        "convert", str(SAMPLES / "example.tfvars"), "--stack", "lab", "--stacks-dir", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "Pulumi.lab.yaml").is_file()
    assert "next: pulumi preview --stack lab" in result.stdout


def test_cli_reports_validation_errors_as_one_line_each(tmp_path):
    result = cli(
        "convert",
        str(SAMPLES / "placeholders.tfvars"),
        "--stack",
        "lab",
        "--stacks-dir",
        str(tmp_path),
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"  - {MSG_CLUSTER_NAME}" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "error: 2 problems in the stack configuration (owner: platform)"
    )
    assert not (tmp_path / "Pulumi.lab.yaml").exists()


def test_cli_refuses_a_stack_name_that_is_a_path(tmp_path):
    result = cli(
        "convert",
        str(SAMPLES / "example.tfvars"),
        "--stack",
        "../lab",
        "--stacks-dir",
        str(tmp_path),
    )
    assert result.returncode == 2
    assert "--stack" in result.stderr
    assert list(tmp_path.parent.glob("Pulumi.lab.yaml")) == []


def test_cli_import_file_fills_the_ids(tmp_path):
    assert (
        cli(
            "convert",
            str(SAMPLES / "example.tfvars"),
            "--stack",
            "lab",
            "--stacks-dir",
            str(tmp_path),
        ).returncode
        == 0
    )
    result = cli("import-file", "--stack", "lab", "--stacks-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    by_name = {item["name"]: item for item in document["resources"]}
    assert by_name["aks-cluster"]["id"] == (
        "/subscriptions/00000000-0000-0000-0000-0000000000bb/resourceGroups/rg-taugrid-lab"
        "/providers/Microsoft.ContainerService/managedClusters/taugrid-lab"
    )
    assert by_name["adx-taugrid-portal-viewer"]["id"].endswith(
        "/clusters/taugridlabadx/databases/Metrics/principalAssignments/taugrid-portal-viewer"
    )
    assert by_name["platform-release"]["id"] == "tau-system/taugrid"
    assert document["nameTable"]["aks"] == "urn:pulumi:lab::taugrid::taugrid:infra:AksCluster::aks"
    assert "gpu-mig-normalizer" not in by_name  # nothing to adopt: Pulumi creates it


def test_cli_mapping_lists_every_terraform_address():
    result = cli("mapping", "-o", "json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    addresses = {row["terraform"] for row in rows}
    assert "azurerm_kubernetes_cluster.this" in addresses
    assert "terraform_data.install_taugrid[0]" in addresses


@pytest.mark.parametrize("sample", ["example.tfvars", "full-cluster.tfvars"])
def test_mapping_covers_exactly_the_resources_the_program_registers(sample):
    config, _ = converted(sample)
    run = run_stack(config.model_dump(exclude_none=True), stack="lab")
    registered = {
        (item.type, item.name)
        for item in run.registrations
        if item.custom and not item.type.startswith("pulumi:providers:")
    }
    document = import_file(config, "lab")
    mapped = {(item["type"], item["name"]) for item in document["resources"]}
    created_by_pulumi = {
        (row.pulumi_type, row.name.format(**placeholders(config)))
        for row in MAPPINGS
        if row.pulumi_type and not row.import_id and row.applies(config)
    }
    assert mapped | created_by_pulumi == registered
    parents = {
        item.name: parent.name
        for item in run.registrations
        if (parent := run.parent_of(item)) is not None
    }
    for item in document["resources"]:
        assert parents[item["name"]] == item["parent"]

"""The stack config keeps the Terraform root's variables: names, defaults, validation, locals."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from infra import config as cfg
from infra.config import StackConfigError, adx_cluster_name, parse_stack_config
from tau import __version__ as TAU_VERSION

SUBSCRIPTION = "00000000-0000-0000-0000-000000000001"
GROUP_ID = "11111111-2222-3333-4444-555555555555"


def problems(settings: dict) -> list[str]:
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config({"subscription_id": SUBSCRIPTION, **settings})
    return caught.value.all_problems


def valid(settings: dict) -> cfg.StackConfig:
    return parse_stack_config({"subscription_id": SUBSCRIPTION, **settings})


def test_defaults_are_the_terraform_root_defaults():
    config = valid({})
    assert config.model_dump(exclude={"subscription_id"}) == {
        "tenant_id": None,
        "aks_admin_group_object_ids": [],
        "azure_rbac_enabled": False,
        "location": "swedencentral",
        "resource_group_name": "rg-taugrid-aks",
        "cluster_name": "taugrid-aks",
        "kubernetes_version": None,
        "system_node_count": 2,
        "system_vm_size": "Standard_D4ds_v6",
        "enable_gpu": True,
        "gpu_node_pool_name": "gpu",
        "gpu_stack_mode": "self_managed",
        "gpu_vm_size": "Standard_NC24ads_A100_v4",
        "gpu_node_count": 1,
        "gpu_auto_scaling_enabled": False,
        "gpu_min_count": 1,
        "gpu_max_count": 1,
        "gpu_count_per_node": 1,
        "gpu_monitoring_sku_name": "a100-pcie-1g",
        "gpu_flavor_name": "taugrid-a100",
        "gpu_class": "a100-80gb",
        "gpu_series": "nc24ads-a100-v4",
        "normalize_gpu_mig": True,
        "taugrid_version": TAU_VERSION,
        "install_taugrid": True,
        "command_interpreter": ["pwsh", "-NoProfile", "-NonInteractive", "-Command"],
        "generated_directory": None,
        "enable_adx": False,
        "enable_lifecycle_recorder": False,
        "workspace_namespace": "taugrid-default",
        "bootstrap_workspace": None,
        "adx_cluster_name": "",
        "adx_sku_name": "Dev(No SLA)_Standard_D11_v2",
        "adx_sku_capacity": 1,
        "adx_streaming_ingestion_enabled": True,
        "dcgm_exporter_chart_version": "4.8.3",
        "tags": {"scenario": "taugrid-aks"},
        "kube_context": None,
        "kubeconfig": None,
        "taugrid_chart": "charts/taugrid-bundle",
        "taugrid_values": {},
    }


def test_subscription_id_is_required_for_an_azure_stack():
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config({})
    assert caught.value.all_problems == [cfg.MSG_SUBSCRIPTION_REQUIRED]


def test_an_existing_cluster_stack_needs_no_subscription():
    config = parse_stack_config({"kube_context": "kubernetes-admin@taugrid-local"})
    assert not config.provisions_azure
    assert not config.has_gpu_pool


@pytest.mark.parametrize("name", ["a", "taugrid-aks", "A-1", "x" + "y" * 53])
def test_cluster_name_accepts_a_letter_then_letters_digits_hyphens(name):
    assert valid({"cluster_name": name}).cluster_name == name


@pytest.mark.parametrize("name", ["", "1aks", "-aks", "aks_1", "x" + "y" * 54, "aks.x"])
def test_cluster_name_rule(name):
    assert problems({"cluster_name": name}) == [cfg.MSG_CLUSTER_NAME]


def test_gpu_stack_mode_rule():
    assert problems({"gpu_stack_mode": "gpu_operator"}) == [cfg.MSG_GPU_STACK_MODE]
    assert valid({"gpu_stack_mode": "aks_managed_preview"}).gpu_stack_mode == "aks_managed_preview"


def test_gpu_min_count_rule():
    assert problems({"gpu_min_count": -1, "gpu_max_count": 1}) == [cfg.MSG_GPU_MIN_COUNT]
    assert valid({"gpu_min_count": 0, "normalize_gpu_mig": False}).gpu_min_count == 0


def test_gpu_max_count_rule():
    assert problems({"gpu_min_count": 3, "gpu_max_count": 2}) == [cfg.MSG_GPU_MAX_COUNT]


def test_lifecycle_recorder_requires_adx():
    assert problems({"enable_lifecycle_recorder": True}) == [cfg.MSG_RECORDER_REQUIRES_ADX]
    assert valid({"enable_lifecycle_recorder": True, "enable_adx": True}).enable_adx


@pytest.mark.parametrize(
    "namespace",
    [
        "",
        "default",
        "tau-system",
        "tau-platform",
        "kube-system",
        "kube-x",
        "Team",
        "a_b",
        "-a",
        "a-",
        "x" * 64,
    ],
)
def test_workspace_namespace_rule(namespace):
    assert problems({"workspace_namespace": namespace}) == [cfg.MSG_WORKSPACE_NAMESPACE]


@pytest.mark.parametrize(
    "workspace",
    [
        {"name": "Team-A", "entra_group_object_id": GROUP_ID},
        {"name": "x" * 64, "entra_group_object_id": GROUP_ID},
        {"name": "team-a", "entra_group_object_id": "not-a-uuid"},
        {"name": "team-a", "entra_group_object_id": GROUP_ID[:-1]},
    ],
)
def test_bootstrap_workspace_rule(workspace):
    assert problems({"bootstrap_workspace": workspace}) == [cfg.MSG_BOOTSTRAP_WORKSPACE]


def test_bootstrap_workspace_accepts_a_lowercase_name_and_a_uuid():
    config = valid({"bootstrap_workspace": {"name": "team-a", "entra_group_object_id": GROUP_ID}})
    assert config.bootstrap_workspace.name == "team-a"


@pytest.mark.parametrize("name", ["abc", "ABCD", "taugrid-adx", "a" * 23, "adx_cluster"])
def test_adx_cluster_name_rule(name):
    assert problems({"adx_cluster_name": name}) == [cfg.MSG_ADX_CLUSTER_NAME]


def test_generated_directory_rule():
    assert problems({"generated_directory": "  "}) == [cfg.MSG_GENERATED_DIRECTORY]


def test_autoscaling_cannot_be_combined_with_mig_normalisation():
    settings = {"gpu_auto_scaling_enabled": True, "gpu_max_count": 2}
    assert problems(settings) == [cfg.MSG_AUTOSCALING_WITH_MIG]
    assert valid({**settings, "normalize_gpu_mig": False}).gpu_auto_scaling_enabled


def test_autoscaling_is_unsupported_in_the_managed_gpu_preview():
    settings = {
        "gpu_auto_scaling_enabled": True,
        "normalize_gpu_mig": False,
        "gpu_stack_mode": "aks_managed_preview",
    }
    assert problems(settings) == [cfg.MSG_AUTOSCALING_WITH_PREVIEW]


def test_gpu_pool_preconditions_only_apply_when_there_is_a_gpu_pool():
    # Terraform evaluates them on the GPU pool resource, which enable_gpu=false removes.
    config = valid({"enable_gpu": False, "gpu_auto_scaling_enabled": True})
    assert not config.has_gpu_pool


def test_adx_needs_an_azure_stack():
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config({"kube_context": "ctx", "enable_adx": True})
    assert caught.value.all_problems == [cfg.MSG_ADX_REQUIRES_AZURE]


def test_bootstrap_workspace_needs_the_platform_install():
    workspace = {"name": "team-a", "entra_group_object_id": GROUP_ID}
    assert problems({"bootstrap_workspace": workspace, "install_taugrid": False}) == [
        cfg.MSG_BOOTSTRAP_REQUIRES_INSTALL
    ]


def test_an_unknown_key_is_named():
    assert problems({"enable_portl": True}) == [
        "enable_portl: is not a setting of this project; check the spelling (see docs/infra.md)"
    ]


def test_a_wrong_type_names_the_key():
    [problem] = problems({"gpu_node_count": "two"})
    assert problem.startswith("gpu_node_count: ")


def test_every_problem_is_reported_at_once():
    found = problems({"cluster_name": "1", "adx_cluster_name": "A", "gpu_stack_mode": "x"})
    assert sorted(found) == sorted(
        [cfg.MSG_CLUSTER_NAME, cfg.MSG_ADX_CLUSTER_NAME, cfg.MSG_GPU_STACK_MODE]
    )
    with pytest.raises(StackConfigError) as caught:
        valid({"cluster_name": "1", "adx_cluster_name": "A"})
    assert caught.value.message == "2 problems in the stack configuration"
    assert caught.value.exit_code == 2


def test_engine_strings_are_typed_like_the_yaml_values():
    # `pulumi config set` stores text; structured values reach the program as JSON text.
    config = valid(
        {
            "gpu_node_count": "3",
            "enable_adx": "true",
            "tags": '{"scenario": "x", "owner": "y"}',
            "aks_admin_group_object_ids": f'["{GROUP_ID}"]',
        }
    )
    assert config.gpu_node_count == 3
    assert config.enable_adx is True
    assert config.tags == {"scenario": "x", "owner": "y"}
    assert config.aks_admin_group_object_ids == [GROUP_ID]


@pytest.mark.parametrize(
    ("settings", "quota"),
    [
        ({}, 1),
        ({"gpu_node_count": 2, "gpu_count_per_node": 8}, 16),
        (
            {
                "gpu_auto_scaling_enabled": True,
                "normalize_gpu_mig": False,
                "gpu_node_count": 1,
                "gpu_min_count": 0,
                "gpu_max_count": 4,
                "gpu_count_per_node": 2,
            },
            8,
        ),
    ],
)
def test_gpu_quota_counts_the_largest_pool_size(settings, quota):
    assert valid(settings).gpu_quota == quota


def _coreutils_sha256(text: str) -> str:
    # An implementation independent of hashlib, like upstream checking its PowerShell twin
    # against `terraform console`.
    result = subprocess.run(["sha256sum"], input=text.encode(), capture_output=True, check=True)
    return result.stdout.decode().split()[0]


def test_adx_name_rule_reproduces_known_inputs():
    name = adx_cluster_name(SUBSCRIPTION, "taugrid-verify-test", "taugrid-verify-test")
    assert name == "taugridf69b37b5026c2"
    expected = (
        "taugrid"
        + _coreutils_sha256(f"{SUBSCRIPTION}:taugrid-verify-test:taugrid-verify-test")[:13]
    )
    assert name == expected
    assert len(name) == 20
    assert cfg.ADX_NAME_PATTERN.match(name)


def test_adx_name_distinguishes_resource_groups_and_respects_an_explicit_name():
    first = adx_cluster_name(SUBSCRIPTION, "taugrid-verify-test", "taugrid-verify-test")
    other = adx_cluster_name(SUBSCRIPTION, "taugrid-verify-other", "taugrid-verify-other")
    assert first != other
    assert adx_cluster_name(SUBSCRIPTION, "rg", "aks", explicit="myadx01") == "myadx01"
    config = valid({"adx_cluster_name": "myadx01", "enable_adx": True})
    assert config.resolved_adx_cluster_name == "myadx01"


def test_stack_settings_keep_explicit_values_and_drop_nulls():
    config = valid({"gpu_stack_mode": "self_managed", "tenant_id": None, "cluster_name": "lab"})
    assert cfg.to_stack_settings(config) == {
        "subscription_id": SUBSCRIPTION,
        "cluster_name": "lab",
        "gpu_stack_mode": "self_managed",
    }


def test_docs_list_every_setting_with_its_default():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "infra.md").read_text()
    for name, field in cfg.StackConfig.model_fields.items():
        default = field.default_factory() if field.default_factory else field.default
        if default is None:
            shown = "null"
        elif isinstance(default, str):
            shown = default or '""'
        else:
            shown = json.dumps(default)
        assert f"| `{name}` | `{shown}` |" in docs, name

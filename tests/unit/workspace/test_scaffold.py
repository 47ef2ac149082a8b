"""`init-repo`: the scaffold's files, its descriptor rule and its overwrite protection."""

from __future__ import annotations

import pytest
import yaml

from tau.connection import discover_connection
from tau.errors import UsageError
from tau.workspace.scaffold import AksCluster, ScaffoldRequest, package_name, scaffold

SUB = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"


def request(tmp_path, **kwargs) -> ScaffoldRequest:
    return ScaffoldRequest(
        name="vision-lab", output=tmp_path / "repo", image="example.azurecr.io/vision:1", **kwargs
    )


@pytest.mark.parametrize(
    ("name", "package"),
    [("vision-lab", "vision_lab"), ("My.Repo  x", "my_repo_x"), ("3d-seg", "tau_3d_seg")],
)
def test_package_names(name, package):
    assert package_name(name) == package


def test_without_workspace_flags_no_descriptor_is_written(tmp_path):
    written = {p.relative_to(tmp_path / "repo").as_posix() for p in scaffold(request(tmp_path))}
    assert {"tau/smoke.yaml", "tau/train.yaml", "README.md", "src/vision_lab/train.py"} <= written
    assert "tau/workspace.connection.yaml" not in written
    train = yaml.safe_load((tmp_path / "repo" / "tau" / "train.yaml").read_text())
    assert train["runtime"]["image"] == "example.azurecr.io/vision:1"
    assert "policy" not in train


def test_a_kube_context_descriptor_is_valid_and_discoverable(tmp_path):
    scaffold(request(tmp_path, workspace="research", kube_context="lab"))
    (tmp_path / "repo" / ".git").mkdir()
    source = discover_connection(tmp_path / "repo" / "src")
    assert source.descriptor.context_name == "lab"
    assert source.descriptor.access.method == "kubeconfig"


def test_aks_flags_write_an_aks_descriptor_whose_context_defaults_to_the_cluster(tmp_path):
    aks = AksCluster(SUB, TENANT, "rg-research", "research-aks")
    scaffold(request(tmp_path, workspace="research", aks=aks))
    (tmp_path / "repo" / ".git").mkdir()
    descriptor = discover_connection(tmp_path / "repo").descriptor
    assert descriptor.context_name == "research-aks"
    assert descriptor.access.aks.resourceID == aks.resource_id


def test_cluster_flags_need_a_workspace_and_a_workspace_needs_a_cluster(tmp_path):
    with pytest.raises(UsageError, match="require --workspace"):
        scaffold(request(tmp_path, kube_context="lab"))
    with pytest.raises(UsageError, match="--workspace needs --kube-context"):
        scaffold(request(tmp_path, workspace="research"))


def test_existing_files_abort_without_force_and_nothing_is_changed(tmp_path):
    scaffold(request(tmp_path))
    readme = tmp_path / "repo" / "README.md"
    readme.write_text("mine")
    with pytest.raises(UsageError, match="already exist"):
        scaffold(request(tmp_path))
    assert readme.read_text() == "mine"
    scaffold(request(tmp_path, force=True))
    assert readme.read_text() != "mine"


def test_an_image_is_required(tmp_path):
    with pytest.raises(UsageError, match="--image is required"):
        scaffold(ScaffoldRequest(name="x", output=tmp_path, image=" "))


def test_the_scaffolded_targets_are_valid_run_configs(tmp_path):
    from tau.runconfig.loader import load

    scaffold(request(tmp_path, workspace="research", kube_context="lab"))
    for target in ("smoke", "train"):
        loaded = load(tmp_path / "repo" / "tau" / f"{target}.yaml")  # raises when invalid
        assert not loaded.is_managed
        assert loaded.warnings == []


def test_an_output_that_is_a_file_is_a_usage_error_naming_output(tmp_path):
    (tmp_path / "repo").write_text("")
    with pytest.raises(UsageError) as caught:
        scaffold(request(tmp_path))
    assert caught.value.one_line().startswith(f"--output {tmp_path / 'repo'}: cannot write ")

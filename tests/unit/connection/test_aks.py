"""`access.method: aks`: cluster-user credentials through azure-identity and the ARM API."""

from __future__ import annotations

import pytest
import yaml

from tau.api.connection import validate_descriptor
from tau.connection import LayerFailure, cluster_user_kubeconfig
from tau.kube.errors import AccessError
from tests.unit.closed_port import closed_port


def aks_descriptor(azure, context: str = "research"):
    return validate_descriptor(
        {
            "schema": "tau.workspace.connection.v1",
            "workspace": "research",
            "cluster": {"contextName": context},
            "access": {
                "method": "aks",
                "aks": {"resourceID": azure.RESOURCE_ID, "tenantID": azure.TENANT},
            },
            "authorization": {"mode": "workspace-rbac", "requiredRole": "tau-researcher-v1"},
            "requirements": {"minTauVersion": "0.1.0"},
        },
        "x",
    )


def test_cluster_user_credentials_arrive_under_the_descriptor_context(azure):
    config = cluster_user_kubeconfig(aks_descriptor(azure, "research"))
    assert config["current-context"] == "research"
    assert [c["name"] for c in config["contexts"]] == ["research"]
    assert config["users"][0]["user"]["exec"]["command"] == "kubelogin"
    token_calls = [path for method, path, _ in azure.seen if "oauth2/v2.0/token" in path]
    assert token_calls, "the client-credentials flow ran against the stand-in tenant"
    arm = [auth for method, path, auth in azure.seen if "listClusterUserCredential" in path]
    assert arm == [f"Bearer {azure.ACCESS_TOKEN}"]


def test_missing_cluster_user_role_is_an_authorization_failure(azure):
    azure.credential_status = 403
    with pytest.raises(LayerFailure) as caught:
        cluster_user_kubeconfig(aks_descriptor(azure))
    line = caught.value.one_line()
    assert line.startswith("authorization: your Azure identity may not list cluster-user")
    assert "Cluster User Role" in line


def test_a_cluster_that_does_not_exist_points_at_the_descriptor(azure):
    azure.credential_status = 404
    with pytest.raises(AccessError) as caught:
        cluster_user_kubeconfig(aks_descriptor(azure))
    assert "check access.aks.resourceID in the descriptor" in caught.value.one_line()


def test_a_failed_sign_in_is_an_access_error_without_secrets(azure):
    azure.token_status = 401
    with pytest.raises(AccessError) as caught:
        cluster_user_kubeconfig(aks_descriptor(azure))
    line = caught.value.one_line()
    assert line.startswith(f"access: Azure sign-in for tenant {azure.TENANT} failed")
    assert azure.CLIENT_SECRET not in line and azure.ACCESS_TOKEN not in line


def test_an_unknown_auth_mode_is_a_usage_error(azure, monkeypatch):
    from tau.errors import UsageError

    monkeypatch.setenv("TAU_AUTH_MODE", "magic")
    with pytest.raises(UsageError, match="TAU_AUTH_MODE='magic' is not one of"):
        cluster_user_kubeconfig(aks_descriptor(azure))


def test_aks_credentials_are_fetched_only_after_a_human_approved(azure, tmp_path, monkeypatch):
    from tau.connection import Interaction, ReviewRequired, connect, discover_connection
    from tau.kube import UnavailableError

    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "tau"))
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "tau").mkdir()
    descriptor = aks_descriptor(azure).to_dict()
    (repo / "tau" / "workspace.connection.yaml").write_text(yaml.safe_dump(descriptor))
    source = discover_connection(repo)

    with pytest.raises(ReviewRequired):
        connect(source, Interaction(False, lambda q: "", lambda s: None))
    assert azure.seen == []

    azure.kubeconfig["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{closed_port()}"
    with pytest.raises(UnavailableError):
        connect(source, Interaction(True, lambda q: "y", lambda s: None))
    assert any("listClusterUserCredential" in path for _, path, _ in azure.seen)
    assert not list((tmp_path / "tau").rglob("*.json"))

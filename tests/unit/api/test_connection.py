"""The connection descriptor: every schema rule, and the refusal of credential content."""

from __future__ import annotations

import copy

import pytest

from tau.api.connection import (
    WorkspaceConnection,
    check_tau_version,
    credential_findings,
    parse_aks_resource_id,
    parse_version,
    validate_descriptor,
)
from tau.connection import parse_descriptor_text
from tau.errors import ValidationError
from tests.unit.descriptors import descriptor_text

SUB = "0b1f6471-1bf0-4dda-aec3-cb9272f09590"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
AKS_ID = (
    f"/subscriptions/{SUB}/resourceGroups/rg-research/providers/"
    "Microsoft.ContainerService/managedClusters/research-aks"
)

VALID = {
    "schema": "tau.workspace.connection.v1",
    "workspace": "research",
    "cluster": {"contextName": "research-cluster", "systemNamespace": "tau-system"},
    "access": {"method": "kubeconfig"},
    "authorization": {"mode": "workspace-rbac", "requiredRole": "tau-researcher-v1"},
    "requirements": {"minTauVersion": "0.1.0"},
    "network": {"privateCluster": False},
}


def variant(**changes: object) -> dict:
    data = copy.deepcopy(VALID)
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for key in parents:
            node = node.setdefault(key, {})
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return data


def problems_of(data: dict) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        validate_descriptor(data, "tau/workspace.connection.yaml")
    assert caught.value.exit_code == 2
    assert "platform operator" in caught.value.one_line()
    return caught.value.problems


def test_the_handoff_example_is_valid_and_defaults_the_system_namespace():
    descriptor = validate_descriptor(variant(cluster__systemNamespace=None), "x")
    assert descriptor.system_namespace == "tau-system"
    assert descriptor.access_identity == "kubeconfig:research-cluster"
    assert descriptor.digest.startswith("sha256:") and len(descriptor.digest) == 71


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"schema": "tau.workspace.connection.v2"}, "schema: must be tau.workspace.connection.v1"),
        ({"workspace": "Research_1"}, "workspace: 'Research_1' is not a DNS-1123 subdomain"),
        ({"workspace": "  "}, "workspace: must not be blank"),
        ({"workspace": None}, "workspace: required field is missing"),
        ({"cluster__contextName": " "}, "cluster.contextName: must not be blank"),
        ({"cluster__systemNamespace": "tau.system"}, "cluster.systemNamespace: 'tau.system'"),
        ({"access__method": "token"}, "access.method: 'token' is not one of: kubeconfig, aks"),
        ({"authorization__mode": "open"}, "authorization.mode: 'open' is not one of"),
        ({"authorization__requiredRole": None}, "requiredRole is required for workspace-rbac"),
        ({"requirements__minTauVersion": "1.2"}, "requirements.minTauVersion: '1.2' is not"),
        ({"network__privateCluster": True}, "network: network.instructions must say"),
        ({"network__privateCluster": "yes"}, "network.privateCluster: Input should be a valid"),
        ({"extra": "x"}, "extra: unknown field"),
        ({"cluster__server": "https://x"}, "cluster.server: unknown field"),
        ({"workspace": 7}, "workspace: Input should be a valid string"),
    ],
)
def test_each_rule_is_reported_with_its_field(changes, expected):
    assert any(expected in problem for problem in problems_of(variant(**changes)))


def test_cluster_wide_forbids_a_required_role():
    data = variant(authorization__mode="cluster-wide")
    assert any("must be omitted for cluster-wide" in p for p in problems_of(data))
    ok = variant(authorization__mode="cluster-wide", authorization__requiredRole=None)
    assert validate_descriptor(ok, "x").authorization.mode == "cluster-wide"


def test_all_independent_problems_come_back_in_one_pass():
    data = variant(workspace="BAD!", access__method="ssh", requirements__minTauVersion="x")
    assert len(problems_of(data)) == 3


def test_aks_access_requires_a_managed_cluster_id_and_tenant_uuid():
    good = variant(access={"method": "aks", "aks": {"resourceID": AKS_ID, "tenantID": TENANT}})
    descriptor = validate_descriptor(good, "x")
    assert descriptor.access_identity == f"aks:{AKS_ID.lower()}:{TENANT}"

    assert any(
        "access.aks (resourceID, tenantID) is required" in p
        for p in problems_of(variant(access={"method": "aks"}))
    )
    bad_tenant = {"method": "aks", "aks": {"resourceID": AKS_ID, "tenantID": "contoso"}}
    assert any("tenantID: must be a UUID" in p for p in problems_of(variant(access=bad_tenant)))
    with_aks = {"method": "kubeconfig", "aks": {"resourceID": AKS_ID, "tenantID": TENANT}}
    assert any(
        "access.aks must be omitted for method kubeconfig" in p
        for p in problems_of(variant(access=with_aks))
    )


@pytest.mark.parametrize(
    ("resource_id", "message"),
    [
        (AKS_ID.replace("Microsoft.ContainerService", "Microsoft.Compute"), "provider namespace"),
        (AKS_ID.replace(SUB, "my-subscription"), "subscription ID must be a UUID"),
        (AKS_ID.replace("managedClusters", "virtualMachines"), "must be an ARM resource ID"),
        (AKS_ID + "/agentPools/x", "must be an ARM resource ID"),
        (AKS_ID.replace("/rg-research/", "//"), "resource group and cluster name must be non"),
    ],
)
def test_aks_resource_id_rules(resource_id, message):
    with pytest.raises(ValueError, match=message):
        parse_aks_resource_id(resource_id)


def test_aks_resource_id_keys_are_case_insensitive():
    parsed = parse_aks_resource_id(AKS_ID.replace("resourceGroups", "resourcegroups"))
    assert (parsed.subscription, parsed.resource_group, parsed.name) == (
        SUB,
        "rg-research",
        "research-aks",
    )


def test_version_parsing_and_the_min_version_gate():
    assert parse_version("v0.3.2-rc.1") == parse_version("0.3.2")
    descriptor = validate_descriptor(variant(requirements__minTauVersion="0.3.0"), "x")
    check_tau_version(descriptor, "0.3.0")
    check_tau_version(descriptor, "DEV")
    with pytest.raises(ValidationError, match=r"Tau 0\.2\.9 is too old .* install Tau 0\.3\.0"):
        check_tau_version(descriptor, "0.2.9")


@pytest.mark.parametrize("bad", ["0.3", "0.3.0.1", "latest", "0.3.x", ""])
def test_min_version_must_be_major_minor_patch(bad):
    with pytest.raises(ValueError, match=r"is not a version like 0\.3\.0"):
        parse_version(bad)


@pytest.mark.parametrize(
    ("installed", "passes"),
    [
        ("0.10.0", True),  # numeric, not text, order
        ("0.9.9", False),
        ("0.10.0.dev3+g1a2b3c", True),  # a development build of the required release
        ("0.10.0rc1", True),
        ("1.0.0", True),
    ],
)
def test_the_gate_compares_release_numbers(installed, passes):
    descriptor = validate_descriptor(variant(requirements__minTauVersion="0.10.0"), "x")
    if passes:
        check_tau_version(descriptor, installed)
    else:
        with pytest.raises(ValidationError, match="too old"):
            check_tau_version(descriptor, installed)


def test_digest_is_stable_and_changes_with_content():
    first = validate_descriptor(VALID, "x")
    assert first.digest == WorkspaceConnection.model_validate(copy.deepcopy(VALID)).digest
    assert first.digest != validate_descriptor(variant(workspace="other"), "x").digest


DESCRIPTOR_TEXT = descriptor_text(context="research-cluster")

JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJl"


@pytest.mark.parametrize(
    ("extra", "kind"),
    [
        (f"  token: {JWT}\n", "key 'token'"),
        (f"network:\n  instructions: 'export TOKEN={JWT}'\n", "a JSON Web Token"),
        ("# Authorization: Bearer abcdefghijklmnopqrstuvwx\n", "a bearer token"),
        ("users:\n- name: admin\n", "key 'users'"),
        ("  client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVkt\n", "key 'client-key-data'"),
        ("network:\n  instructions: |\n    -----BEGIN CERTIFICATE-----\n", "a PEM certificate"),
        ("  clientSecret: abc\n", "key 'clientSecret'"),
        (
            "network:\n  instructions: DefaultEndpointsProtocol=https;AccountKey=abc\n",
            "storage account key",
        ),
        ("network:\n  instructions: use Xy19Q~abcdefghijklmnopqrstuvwxyz012345\n", "client secret"),
    ],
)
def test_credential_shaped_content_is_refused_without_echoing_it(extra, kind):
    with pytest.raises(ValidationError) as caught:
        parse_descriptor_text(DESCRIPTOR_TEXT + extra, "tau/workspace.connection.yaml")
    error = caught.value
    assert "credential-shaped content" in error.one_line()
    assert any(kind in problem for problem in error.problems)
    rendered = error.one_line() + "\n".join(error.problems)
    assert JWT not in rendered
    assert "abcdefghijklmnop" not in rendered


def test_plain_vpn_instructions_are_not_mistaken_for_credentials():
    text = DESCRIPTOR_TEXT + (
        "network:\n  privateCluster: true\n"
        "  instructions: Connect to the corp VPN (https://vpn.example.com/research) first.\n"
    )
    assert credential_findings(text) == []
    assert parse_descriptor_text(text, "x").private_cluster


def test_multiple_documents_and_duplicate_keys_are_refused():
    with pytest.raises(ValidationError, match="multiple YAML documents are not allowed"):
        parse_descriptor_text(DESCRIPTOR_TEXT + "---\nworkspace: other\n", "x")
    with pytest.raises(ValidationError, match="duplicate key 'workspace'"):
        parse_descriptor_text(DESCRIPTOR_TEXT + "workspace: other\n", "x")

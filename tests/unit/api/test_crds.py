"""The chart's CRDs are generated from tau/api and carry the whole API contract."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tau.api import crds

ROOT = Path(__file__).resolve().parents[3]
CHART_CRDS = ROOT / crds.CRD_DIR


def load(plural: str) -> dict:
    return yaml.safe_load(crds.render_all()[f"tau.azure.com_{plural}.yaml"])


def schema(plural: str) -> dict:
    return load(plural)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def test_checked_in_crds_are_exactly_the_generated_ones():
    assert crds.differences(CHART_CRDS) == []


def test_check_mode_reports_a_stale_file(tmp_path):
    assert crds.main(["--output-dir", str(tmp_path)]) == 0
    stale = tmp_path / "tau.azure.com_workspaces.yaml"
    stale.write_text(stale.read_text().replace("workspace-rbac", "workspace-rbak"))
    (tmp_path / "handwritten.yaml").write_text("kind: CustomResourceDefinition\n")
    problems = crds.differences(tmp_path)
    assert any("workspaces" in p and "differs" in p for p in problems)
    assert any("handwritten.yaml" in p for p in problems)
    assert crds.main(["--output-dir", str(tmp_path), "--check"]) == 1


def test_no_other_crd_source_in_the_repository():
    generated = {CHART_CRDS / name for name in crds.render_all()}
    found = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        for name in files:
            if name.endswith((".yaml", ".yml")):
                text = (Path(folder) / name).read_text(errors="ignore")
                if "CustomResourceDefinition" in text and "group: tau.azure.com" in text:
                    found.add(Path(folder) / name)
    assert found == generated


@pytest.mark.parametrize(
    ("plural", "kind", "scope", "short"),
    [
        ("clusters", "TauCluster", "Cluster", "tc"),
        ("workspaces", "TauWorkspace", "Namespaced", "tw"),
        ("quotarequests", "TauQuotaRequest", "Namespaced", "tqr"),
    ],
)
def test_each_kind_is_served_once_with_a_status_subresource(plural, kind, scope, short):
    crd = load(plural)["spec"]
    assert crd["group"] == "tau.azure.com"
    assert crd["names"]["kind"] == kind
    assert crd["names"]["shortNames"] == [short]
    assert crd["scope"] == scope
    [version] = crd["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"][-1]["name"] == "Age"


def test_printer_columns():
    def columns(plural):
        version = load(plural)["spec"]["versions"][0]
        return [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]

    assert columns("clusters")[:2] == [("Mode", ".spec.managementMode"), ("Phase", ".status.phase")]
    assert columns("workspaces")[:3] == [
        ("Phase", ".status.phase"),
        ("Namespace", ".status.target.resolvedNamespace"),
        ("Queue", ".spec.queue"),
    ]
    requested = load("quotarequests")["spec"]["versions"][0]["additionalPrinterColumns"][2]
    assert requested == {"name": "Requested", "jsonPath": ".spec.requested", "type": "integer"}


def test_tau_cluster_defaults_and_no_storage_fields():
    spec = schema("clusters")["properties"]["spec"]["properties"]
    assert spec["managementMode"]["default"] == "Observe"
    assert spec["managementMode"]["enum"] == ["Observe", "Reconcile"]
    assert spec["deletionPolicy"]["default"] == "Retain"
    assert spec["queues"]["properties"]["ownership"]["default"] == "External"
    assert spec["workspaceDefaults"]["properties"]["defaultQueue"]["default"] == "jobqueue"
    assert "storage" not in spec
    assert set(spec["workspaceDefaults"]["properties"]) == {"defaultQueue"}
    rules = spec["nodes"]["properties"]["labelRules"]
    assert rules["x-kubernetes-list-type"] == "atomic"
    assert rules["items"]["properties"]["labels"]["minProperties"] == 1
    vm_sizes = rules["items"]["properties"]["match"]["properties"]["vmSizes"]
    assert vm_sizes["x-kubernetes-list-type"] == "set"


def test_workload_profiles_are_list_maps_without_capacity_selectors():
    spec = schema("clusters")["properties"]["spec"]["properties"]["workloadProfiles"]
    status = schema("clusters")["properties"]["status"]["properties"]["workloadProfiles"]
    assert spec["x-kubernetes-list-map-keys"] == ["name"]
    assert status["properties"]["profiles"]["x-kubernetes-list-map-keys"] == ["name"]
    profile = spec["items"]["properties"]
    assert profile["mode"]["enum"] == ["fixed", "elastic"]
    assert profile["placement"]["enum"] == ["independent", "single-node-nvlink", "multi-node-nccl"]
    assert profile["executionTarget"] == {
        "default": "singleCluster",
        "enum": ["singleCluster", "multiKueue"],
        "type": "string",
    }
    for forbidden in ("quota", "capacity", "resourceFlavors", "topology", "nodeSelector"):
        assert forbidden not in profile
    rules = [r["rule"] for r in spec["items"]["x-kubernetes-validations"]]
    assert any("workerCount <= 1" in r for r in rules)


def test_workspace_schema_authorization_rule_and_absent_storage():
    root = schema("workspaces")["properties"]
    spec = root["spec"]
    mode = spec["properties"]["authorization"]["properties"]["mode"]
    assert mode["enum"] == ["workspace-rbac", "cluster-wide"]
    assert mode["default"] == "workspace-rbac"
    [rule] = spec["x-kubernetes-validations"]
    assert "cluster-wide" in rule["rule"] and "has(self.principalRef)" in rule["rule"]
    assert "storage" not in spec["properties"]
    assert "quota" not in root["status"]["properties"]
    ttl = spec["properties"]["defaults"]["properties"]["ttlSecondsAfterFinished"]
    assert (ttl["minimum"], ttl["maximum"]) == (600, 2147483647)


def test_quota_request_mutation_mode_has_one_value():
    root = schema("quotarequests")
    assert root["required"] == ["spec"]
    spec = root["properties"]["spec"]
    assert spec["properties"]["mutationMode"]["enum"] == ["ReportOnly"]
    assert spec["properties"]["requested"]["minimum"] == 1
    assert root["properties"]["status"]["properties"]["phase"]["enum"] == [
        "PendingApproval",
        "Approved",
        "Rejected",
        "Expired",
    ]

"""The chart's default catalogs are valid by the controller's own rules."""

from __future__ import annotations

from pathlib import Path

import yaml

from tau.api.cluster import TauClusterSpec
from tau.controller.nodes import rule_conflicts, rule_problems
from tau.profiles.normalize import validation_problems

VALUES = (
    Path(__file__).resolve().parents[3] / "charts/taugrid/charts/tau-core-controller/values.yaml"
)


def catalog() -> dict:
    return yaml.safe_load(VALUES.read_text())["tauCluster"]


def test_node_label_catalog_is_valid_and_conflict_free():
    rules = catalog()["nodeLabelRules"]
    assert rules, "the chart ships the VM-size catalog"
    assert rule_problems(rules) == []
    assert rule_conflicts(rules) == []


def test_workload_profile_catalog_is_valid_and_in_normal_form():
    values = catalog()
    profiles = values["workloadProfiles"]
    assert profiles
    for profile in profiles:
        assert validation_problems(profile) == [], profile["name"]
    TauClusterSpec.model_validate(
        {"nodes": {"labelRules": values["nodeLabelRules"]}, "workloadProfiles": profiles}
    )

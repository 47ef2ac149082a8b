"""profileSetHash interoperates with upstream TauGrid: its published hashes reproduce exactly."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from tau.errors import ValidationError
from tau.profiles.gojson import marshal
from tau.profiles.normalize import (
    hash_record,
    normalize,
    normalize_resolved,
    profile_set_hash,
    resolved_profiles,
)
from tau.profiles.snapshot import load_snapshot

FIXTURES = Path(__file__).parent / "fixtures"
UPSTREAM_SNAPSHOT = FIXTURES / "upstream" / "serve-h100-eight.snapshot.yaml"
RENAMED_PLACEMENT_SNAPSHOT = (
    FIXTURES / "upstream" / "serve-h100-eight.same-network-domain.snapshot.yaml"
)
GO_VECTORS = json.loads((FIXTURES / "go-encoding-vectors.json").read_text())["cases"]


def test_upstream_snapshot_hash_is_reproduced():
    snapshot = yaml.safe_load(UPSTREAM_SNAPSHOT.read_text())
    assert snapshot["profileSetHash"].startswith("ee32774f")
    assert profile_set_hash(snapshot["profiles"]) == snapshot["profileSetHash"]


@pytest.mark.parametrize("line_end", ["\n", "\r\n"])
def test_upstream_snapshot_decodes_with_lf_or_crlf(tmp_path, line_end):
    path = tmp_path / "profiles.snapshot.yaml"
    path.write_bytes(UPSTREAM_SNAPSHOT.read_text().replace("\n", line_end).encode())
    profiles = load_snapshot(path)
    assert profiles.generation == 23
    assert profiles.profile_set_hash.startswith("ee32774f")
    chosen = profiles.select(
        "h100-nvl-8node", namespace="taugrid-default", team="research", lane="serving"
    )
    assert chosen.profile["workerCount"] == 8


def test_renamed_placement_snapshot_encodes_exactly_but_is_refused(tmp_path):
    snapshot = yaml.safe_load(RENAMED_PLACEMENT_SNAPSHOT.read_text())
    records = [hash_record(normalize_resolved(p)) for p in snapshot["profiles"]]
    assert hashlib.sha256(marshal(records)).hexdigest() == snapshot["profileSetHash"]
    with pytest.raises(ValidationError, match="placement") as refused:
        load_snapshot(RENAMED_PLACEMENT_SNAPSHOT)
    assert "owner: researcher" in refused.value.one_line()


@pytest.mark.parametrize("case", GO_VECTORS, ids=[case["name"] for case in GO_VECTORS])
def test_go_encoding_vectors(case):
    records = [hash_record(p) for p in resolved_profiles(case["profiles"])]
    assert marshal(records).decode() == case["encoded"]
    assert profile_set_hash(case["profiles"]) == case["sha256"]


def test_hash_is_of_the_normal_form_so_unnormalized_input_hashes_the_same():
    """Upstream normalizes before hashing; its own normalization test inputs, hashed here."""
    (case,) = [c for c in GO_VECTORS if c["name"] == "upstream-serve-h100-eight"]
    (clean,) = case["profiles"]
    messy = {
        **clean,
        "name": " H100_NVL-8node. ",
        "description": f"  {clean['description']}\u3000",
        "applicability": {
            "teams": [" Research "],
            "lanes": ["Serving"],
            "namespaces": [" Taugrid_Default "],
        },
        "mode": " FIXED ",
        "placement": "Multi_Node_NCCL",
        "defaultLocalQueue": " JobQueue ",
        "executionTarget": "",
        "priorities": {
            "workloadPriorityClassName": " Tau_Default ",
            "podPriorityClassName": "TAU-DEFAULT",
        },
        "localQueues": [
            {"namespace": "Taugrid_Default", "name": "JOBQUEUE", "clusterQueue": "Example_GPU_CQ"}
        ],
        "clusterQueues": ["example-gpu-cq", " Example-GPU-CQ", ""],
    }
    assert profile_set_hash([messy]) == case["sha256"]


def test_normalization_matches_upstream_examples():
    got = normalize(
        {
            "name": " Research_GPU.1 ",
            "description": "  Single GPU  ",
            "applicability": {
                "teams": [" Vision Team ", "research"],
                "lanes": [" Training "],
                "namespaces": [" Team_A "],
            },
            "mode": " FIXED ",
            "placement": " SAME_HOST ",
            "defaultLocalQueue": " JobQueue ",
            "priorities": {
                "workloadPriorityClassName": " Tau_Default ",
                "podPriorityClassName": " Tau_Default ",
            },
        }
    )
    assert got["name"] == "research-gpu.1"
    assert got["description"] == "Single GPU"
    assert got["applicability"]["teams"] == ["research", "vision-team"]
    assert got["applicability"]["namespaces"] == ["team-a"]
    assert (got["mode"], got["placement"], got["defaultLocalQueue"]) == (
        "fixed",
        "same-host",
        "jobqueue",
    )
    assert got["executionTarget"] == "singleCluster"
    assert got["priorities"] == {
        "workloadPriorityClassName": "tau-default",
        "podPriorityClassName": "tau-default",
    }


def test_go_whitespace_and_case_rules_not_pythons():
    # Go's TrimSpace keeps U+001C..U+001F (Python's strip removes them); Go lowercases U+0130
    # to a single "i"; tabs inside a name are not separators.
    assert normalize({"description": "\x1ckeep\x1f"})["description"] == "\x1ckeep\x1f"
    assert normalize({"name": "\u0130nfer"})["name"] == "infer"
    assert normalize({"name": "a\tb"})["name"] == "a\tb"


def test_a_profile_upstream_cannot_hash_is_refused():
    (case,) = [c for c in GO_VECTORS if c["name"] == "upstream-serve-h100-eight"]
    (clean,) = case["profiles"]
    unbound = {**clean, "localQueues": [{"namespace": "taugrid-default", "name": "jobqueue"}]}
    with pytest.raises(ValueError, match=r"localQueues\.clusterQueue"):
        profile_set_hash([unbound])
    with pytest.raises(ValueError, match="gpusPerWorker must be an integer"):
        profile_set_hash([{**clean, "gpusPerWorker": "1"}])
    with pytest.raises(ValueError, match="placement"):
        profile_set_hash([{**clean, "placement": "same-network-domain"}])

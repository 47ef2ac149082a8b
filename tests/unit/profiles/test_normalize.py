"""Normal form and the profile set hash are stable, order-insensitive and tamper-evident."""

from __future__ import annotations

import pytest
from controller.world import profile

from tau.profiles.normalize import normalize, profile_set_hash, validation_problems


def test_normalization():
    messy = profile(
        name=" Research_Training.1x. ",
        applicability={"teams": ["Research", "alpha team"], "namespaces": ["Team_A"]},
        mode="Fixed",
        executionTarget="",
        description="  one GPU  ",
    )
    clean = normalize(messy)
    assert clean["name"] == "research-training.1x"
    assert clean["applicability"] == {"teams": ["alpha-team", "research"], "namespaces": ["team-a"]}
    assert clean["mode"] == "fixed"
    assert clean["executionTarget"] == "singleCluster"
    assert clean["description"] == "one GPU"


def test_a_profile_not_in_normal_form_is_invalid():
    assert validation_problems(profile()) == []
    problems = validation_problems(profile(applicability={"teams": ["b", "a"]}))
    assert any("normal form" in p for p in problems)
    assert any(
        "duplicate" in p for p in validation_problems(profile(applicability={"lanes": ["x", "x"]}))
    )
    assert any("workerCount" in p for p in validation_problems(profile(workerCount=2)))


def record(name, **extra):
    queue = {"namespace": "a", "name": "jobqueue", "clusterQueue": "gpu-cq"}
    return {**profile(name=name), "localQueues": [queue], **extra}


def test_hash_ignores_order_and_conditions_but_not_identities():
    a, b = record("a"), record("b")
    base = profile_set_hash([a, b])
    assert base == profile_set_hash([b, a])
    assert base == profile_set_hash([{**a, "conditions": [{"type": "Ready"}]}, b])
    assert base != profile_set_hash([record("a", clusterQueues=["other"]), b])
    assert len(base) == 64 and base == base.lower()


def test_hash_rejects_duplicates():
    with pytest.raises(ValueError, match="duplicate workload profile names"):
        profile_set_hash([record("a"), record("a")])
    twice = {"namespace": "a", "name": "jobqueue", "clusterQueue": "gpu-cq"}
    with pytest.raises(ValueError, match="duplicate LocalQueue"):
        profile_set_hash([record("a", localQueues=[twice, twice])])

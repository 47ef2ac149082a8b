"""`tau` trusts TauCluster profile status only when it is current, ready and consistent."""

from __future__ import annotations

import pytest
from controller.world import profile

from tau import keys
from tau.errors import RuntimeFailure, ValidationError
from tau.profiles.select import ProfileUnavailable, accept_status

from .status import GENERATION, edited, tau_cluster

EVAL = profile(
    name="research.eval.gpu",
    applicability={"teams": ["research"], "lanes": ["eval"], "namespaces": ["team-a"]},
)
GLOBAL = profile(name="everyone.cpu", applicability={"namespaces": ["team-b"]})


def test_a_ready_set_is_accepted_and_stamps_its_revision():
    profiles = accept_status(tau_cluster(profile(), EVAL))
    chosen = profiles.select(
        "research.training.1x", namespace="team-a", team="research", lane="training"
    )
    assert chosen.stamps() == {
        keys.TAU_CLUSTER_GENERATION: str(GENERATION),
        keys.WORKLOAD_PROFILE_SET_HASH: profiles.profile_set_hash,
        keys.WORKLOAD_PROFILE: "research.training.1x",
    }
    assert chosen.profile["localQueues"][0]["clusterQueue"] == "jobqueue"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda o: o["metadata"].update(name="other"), "not the singleton"),
        (lambda o: o["metadata"].update(generation=GENERATION + 1), "stale"),
        (lambda o: o["status"].update(conditions=[]), "WorkloadProfilesReady is missing"),
        (lambda o: o["status"]["conditions"][0].update(status="False"), "not ready"),
        (lambda o: o["status"]["workloadProfiles"].update(profileSetHash=""), "no profileSetHash"),
        (
            lambda o: o["status"]["workloadProfiles"]["profiles"][0].update(gpusPerWorker=8),
            "does not match its profiles",
        ),
        (lambda o: o.pop("status"), "no workload profile status"),
    ],
)
def test_untrustworthy_status_is_refused(edit, message):
    obj = edited(tau_cluster())
    edit(obj)
    with pytest.raises(ProfileUnavailable, match=message) as error:
        accept_status(obj)
    assert isinstance(error.value, RuntimeFailure)
    assert "platform" in error.value.one_line()


def test_implicit_selection_needs_exactly_one_ready_applicable_profile():
    profiles = accept_status(tau_cluster(profile(), EVAL, GLOBAL))
    assert (
        profiles.select(namespace="team-a", team="research", lane="eval").name
        == "research.eval.gpu"
    )
    assert profiles.select(namespace="team-b").name == "everyone.cpu"
    with pytest.raises(ValidationError, match="no ready workload profile"):
        profiles.select(namespace="team-c", team="research", lane="eval")
    broad = accept_status(
        tau_cluster(GLOBAL, profile(name="everyone.gpu", applicability={"namespaces": ["team-b"]}))
    )
    with pytest.raises(ValidationError, match=r"ambiguous.*everyone\.cpu, everyone\.gpu"):
        broad.select(namespace="team-b")


def test_explicit_selection_checks_existence_applicability_and_readiness():
    obj = tau_cluster(profile(), EVAL)
    profiles = accept_status(obj)
    with pytest.raises(ValidationError, match="not published"):
        profiles.select("missing", namespace="team-a")
    with pytest.raises(ValidationError, match="lane 'training' is not in eval"):
        profiles.select("research.eval.gpu", namespace="team-a", team="research", lane="training")
    with pytest.raises(ValidationError, match="no team was given"):
        profiles.select("research.eval.gpu", namespace="team-a", lane="eval")


def test_an_unready_profile_cannot_be_selected():
    missing_queue = profile(name="broken", applicability={"namespaces": ["nowhere"]})
    obj = tau_cluster(profile(), missing_queue)
    obj["status"]["conditions"][0].update(status="True")  # set-level readiness alone is not enough
    profiles = accept_status(obj)
    with pytest.raises(ProfileUnavailable, match="not ready at generation"):
        profiles.select("broken", namespace="nowhere")

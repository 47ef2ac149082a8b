"""TauQuotaRequest: the platform's annotations decide; quota is never mutated."""

from __future__ import annotations

from tau.controller.quota import decide


def request(**annotations):
    return {"metadata": {"name": "more-gpus", "generation": 2, "annotations": annotations}}


def test_pending_until_the_platform_decides():
    status = decide(request())
    assert status["phase"] == "PendingApproval"
    assert status["conditions"][0]["reason"] == "PendingApproval"


def test_approval_is_report_only_and_names_the_reviewer():
    status = decide(
        request(**{"tau.azure.com/approved": "true", "tau.azure.com/reviewed-by": "alice"})
    )
    assert status["phase"] == "Approved"
    assert status["approvedBy"] == "alice"
    assert "ReportOnly" in status["decision"]
    reasons = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert reasons == {"Approved": ("True", "Approved"), "QuotaMutated": ("False", "ReportOnly")}


def test_rejection_wins_over_approval():
    status = decide(request(**{"tau.azure.com/approved": "true", "tau.azure.com/rejected": "true"}))
    assert status["phase"] == "Rejected"
    assert status["decision"] == "rejected by platform"


def test_a_second_decision_keeps_transition_times():
    obj = request(**{"tau.azure.com/approved": "true"})
    first = decide(obj)
    second = decide({**obj, "status": first})
    assert second == first

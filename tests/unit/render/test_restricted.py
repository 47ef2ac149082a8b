"""`runtime.security.mode: restricted` satisfies the Restricted Pod Security Standard."""

from __future__ import annotations

import dataclasses

import pytest

from tau.render import RenderError, render

from . import intents
from .pod_security import violations
from .schema import pod_templates


def restricted(intent):
    return dataclasses.replace(intent, restricted=True)


@pytest.mark.parametrize("fixture", sorted(intents.FIXTURES))
def test_every_pod_of_every_fixture_is_restricted_compliant(fixture):
    for obj in render(restricted(intents.FIXTURES[fixture]())):
        for template in pod_templates(obj):
            assert violations(template["spec"]) == []


def test_without_restricted_mode_the_checker_finds_gaps():
    (job,) = render(intents.quickstart_job())
    assert violations(job["spec"]["template"]["spec"])


def test_default_identity_is_65532_and_explicit_nonzero_ids_are_kept():
    (job,) = render(restricted(intents.quickstart_job()))
    pod = job["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsUser"] == 65532
    assert pod["securityContext"]["runAsGroup"] == 65532
    placement = dataclasses.replace(intents.PLACEMENT, run_as_user=1000, run_as_group=1000)
    (job,) = render(restricted(intents.base(placement=placement)))
    assert job["spec"]["template"]["spec"]["containers"][0]["securityContext"]["runAsUser"] == 1000


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"run_as_user": 0}, "runs as root"),
        ({"privileged": True}, "privileged"),
        ({"allow_privilege_escalation": True}, "privilege escalation"),
        ({"add_capabilities": ("NET_ADMIN",)}, "adds capabilities NET_ADMIN"),
    ],
)
def test_profile_asking_for_privileges_fails_rendering(change, message):
    placement = dataclasses.replace(intents.PLACEMENT, profile="gpu-root", **change)
    with pytest.raises(RenderError, match=message):
        render(restricted(intents.base(placement=placement)))

"""Every pod Tau renders for a namespace enforcing Pod Security `restricted` satisfies the
Restricted Pod Security Standard: `tau run` targets (Job, torchrun, RayJob head and workers,
their offload and driver-log sidecars and payload init containers), `tau serve` endpoints
(Deployment, RayService), managed workflows and the helper Jobs of `tau run get` and
`tau data`. One checker (`pod_security.violations`), one table over every renderer.

The one pod outside it is `tau cluster validate nodes`' GPU probe: a platform operator's
privileged pod (host PID and network, the node's / mounted) in namespace `default`, never in
a workspace namespace; a restricted pod cannot read the node's GPUs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.cluster.probe import probe_pod
from tau.data.podroot import helper_job
from tau.lifecycle.artifacts import reader_job
from tau.render import RenderError, render
from tau.render.endpoint import ServeIntent
from tau.resolve.layers import Overrides
from tau.resolve.workflow import resolve_workflow
from tau.runconfig import load
from tau.serving.kinds import render as render_endpoint

from . import intents, serve_intents
from .pod_security import violations
from .schema import pod_templates
from .test_workflow import CASES as WORKFLOWS
from .test_workflow import WORKSPACE, write


def restricted(intent):
    return dataclasses.replace(intent, restricted=True)


def run_target(fixture: str) -> Callable[[Path], list[dict[str, Any]]]:
    return lambda _: render(restricted(intents.FIXTURES[fixture]()))


def endpoint(fixture: str) -> Callable[[Path], list[dict[str, Any]]]:
    return lambda _: render_endpoint(restricted(serve_intents.FIXTURES[fixture]()))


def workflow(case: str, pod_security: str = "restricted") -> Callable[[Path], list[dict]]:
    """Resolved as submission resolves it: the workspace publishes the namespace's level."""

    def rendered(tmp_path: Path) -> list[dict[str, Any]]:
        manifest, flags = WORKFLOWS[case]
        resolution = resolve_workflow(
            load(write(tmp_path, manifest)),
            overrides=Overrides(**flags),
            workspace=dataclasses.replace(WORKSPACE, pod_security=pod_security),
        )
        return render(resolution.intent)

    return rendered


HELPERS: dict[str, Callable[[Path], list[dict[str, Any]]]] = {
    "helper: tau run get reader": lambda _: [
        reader_job("research", "blob-training", "/data", 'ls -1Ap -- "$1"', "/data/out")
    ],
    "helper: tau data reader": lambda _: [
        helper_job("research", "training-data", "read", "true", [], [], 120, False)
    ],
    "helper: tau data writer": lambda _: [
        helper_job("research", "training-data", "write", "true", [], [], 120, True)
    ],
}
RENDERERS: dict[str, Callable[[Path], list[dict[str, Any]]]] = {
    **{f"run: {name}": run_target(name) for name in intents.FIXTURES},
    **{f"serve: {name}": endpoint(name) for name in serve_intents.FIXTURES},
    **{f"workflow: {case}": workflow(case) for case in WORKFLOWS},
    **HELPERS,
}


def pod_specs(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    specs = [template["spec"] for obj in objects for template in pod_templates(obj)]
    assert specs or not objects, [obj["kind"] for obj in objects]
    return specs


@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_every_pod_of_every_renderer_is_restricted_compliant(renderer, tmp_path):
    specs = pod_specs(RENDERERS[renderer](tmp_path))
    assert specs
    for spec in specs:
        assert violations(spec) == []


PLAIN: dict[str, Callable[[Path], list[dict[str, Any]]]] = {
    **{
        f"serve: {name}": lambda _, name=name: render_endpoint(serve_intents.FIXTURES[name]())
        for name in serve_intents.FIXTURES
    },
    **{f"workflow: {case}": workflow(case, pod_security="baseline") for case in WORKFLOWS},
}


@pytest.mark.parametrize("renderer", sorted(PLAIN))
def test_outside_a_restricted_namespace_endpoints_and_workflows_keep_plain_pods(renderer, tmp_path):
    """The checker has something to find: the fields come from the namespace's level."""
    for spec in pod_specs(PLAIN[renderer](tmp_path)):
        assert violations(spec)


def test_the_gpu_node_probe_is_the_one_privileged_pod_and_stays_out_of_workspaces():
    pod = probe_pod("gpu-node-1", stamp=1, image="tau:dev", seconds=60)
    assert pod["metadata"]["namespace"] == "default"
    assert "pod sets hostPID" in violations(pod["spec"])


def test_a_serve_profile_asking_for_root_is_refused_naming_the_namespace_level():
    intent: ServeIntent = serve_intents.FIXTURES["deployment-hpa"]()
    placement = dataclasses.replace(intent.placement, profile="gpu-root", run_as_user=0)
    with pytest.raises(RenderError, match=r'Pod Security "restricted" of namespace .* root'):
        render_endpoint(dataclasses.replace(intent, placement=placement, restricted=True))


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

"""One registry value for this project's images; repository and tag or digest per image."""

from __future__ import annotations

import pytest

from tau.cluster.chart import DEFAULT_CHART_VERSION

from .conftest import RenderError

RECORDER = [
    "taugrid-core.lifecycleRecorder.enabled=true",
    "taugrid-core.lifecycleRecorder.targetNamespace=research",
    "taugrid-core.lifecycleRecorder.cluster=local",
    "taugrid-core.lifecycleRecorder.storeClaim=workspace-store",
]
OURS = {
    ("tau-core-controller", "controller"): "tau-core-controller",
    ("tau-portal", "init-store"): "taugrid-portal",
    ("tau-portal", "portal"): "taugrid-portal",
    ("tau-lifecycle-recorder", "recorder"): "tau",
}


def images(objects) -> dict[tuple[str, str], str]:
    found = {}
    for obj in objects:
        if obj["kind"] not in ("Deployment", "DaemonSet"):
            continue
        spec = obj["spec"]["template"]["spec"]
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            found[(obj["metadata"]["name"], container["name"])] = container["image"]
    return found


def test_by_default_the_images_come_from_the_release_registry_at_the_chart_version(render):
    rendered = images(render(*RECORDER))
    for where, repository in OURS.items():
        expected = f"mcr.microsoft.com/aks/ai-runtime/{repository}:{DEFAULT_CHART_VERSION}"
        assert rendered[where] == expected, where


def test_one_registry_value_moves_every_project_image_and_nothing_else(render):
    default = images(render(*RECORDER))
    moved = images(render(*RECORDER, "global.imageRegistry=127.0.0.1:5000"))
    for where, repository in OURS.items():
        assert moved[where] == f"127.0.0.1:5000/{repository}:{DEFAULT_CHART_VERSION}", where
    others = {w for w in default if w not in OURS}
    assert others, "GPU monitoring renders third-party images"
    assert {w: moved[w] for w in others} == {w: default[w] for w in others}


def test_each_image_takes_its_own_tag_or_digest(render):
    digest = "sha256:" + "c" * 64
    rendered = images(
        render(
            *RECORDER,
            "global.imageRegistry=registry.internal/taugrid/",
            "tau-core-controller.image.tag=dev-1",
            f"taugrid-core.portal.image.digest={digest}",
            f"taugrid-core.lifecycleRecorder.image.digest={digest}",
        )
    )
    assert rendered[("tau-core-controller", "controller")] == (
        "registry.internal/taugrid/tau-core-controller:dev-1"
    )
    assert (
        rendered[("tau-portal", "portal")] == f"registry.internal/taugrid/taugrid-portal@{digest}"
    )
    assert (
        rendered[("tau-lifecycle-recorder", "recorder")]
        == f"registry.internal/taugrid/tau@{digest}"
    )


@pytest.mark.parametrize(
    "repository",
    ["mcr.microsoft.com/aks/ai-runtime/tau", "localhost/tau", "127.0.0.1:5000/team/tau"],
)
def test_a_repository_that_names_its_registry_host_is_used_as_written(render, repository):
    rendered = images(
        render(
            *RECORDER,
            "global.imageRegistry=127.0.0.1:5000",
            f"taugrid-core.lifecycleRecorder.image.repository={repository}",
        )
    )
    assert (
        rendered[("tau-lifecycle-recorder", "recorder")] == f"{repository}:{DEFAULT_CHART_VERSION}"
    )


def test_a_malformed_recorder_digest_is_refused_by_the_schema(render):
    with pytest.raises(RenderError, match="digest"):
        render(*RECORDER, "taugrid-core.lifecycleRecorder.image.digest=latest")

"""Every command the chart runs in this project's images exists in those images.

The images are the ones docker/ describes, built from this checkout by the daemonless builder
(cached by content hash; hack/setup/05-image-tools.sh installs its tools). A container with no
command must run an image that has an entrypoint.
"""

from __future__ import annotations

import posixpath

import pytest

from hack.images import Builder, BuildError

from .test_image_values import RECORDER

REGISTRY = "registry.test:5000"


@pytest.fixture(scope="module")
def built():
    builder = Builder()
    try:
        images = builder.build()
    except BuildError as error:
        pytest.fail(f"the images could not be built: {error}", pytrace=False)
    return builder, {image.repository: image for image in images}


def _containers(objects):
    for obj in objects:
        if obj["kind"] not in ("Deployment", "DaemonSet", "Job", "StatefulSet"):
            continue
        spec = obj["spec"]["template"]["spec"]
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            yield f"{obj['kind']}/{obj['metadata']['name']}/{container['name']}", container


def _resolve(program: str, files: set[str], path: str) -> str | None:
    if program.startswith("/"):
        return program if program in files else None
    for directory in path.split(":"):
        candidate = posixpath.join(directory, program)
        if candidate in files:
            return candidate
    return None


def _module_exists(module: str, files: set[str]) -> bool:
    relative = module.replace(".", "/")
    return any(
        f.endswith(f"/site-packages/{relative}/__main__.py")
        or f.endswith(f"/site-packages/{relative}.py")
        for f in files
    )


def test_every_command_the_chart_runs_in_our_images_is_in_the_image(render, built):
    builder, by_repository = built
    objects = render(*RECORDER, f"global.imageRegistry={REGISTRY}")
    checked = set()
    for where, container in _containers(objects):
        image = container["image"]
        if not image.startswith(f"{REGISTRY}/"):
            continue
        repository = image.removeprefix(f"{REGISTRY}/").split(":")[0].split("@")[0]
        assert repository in by_repository, f"{where}: {image} is not built from docker/"
        tag = by_repository[repository].tag
        files = builder.files(tag)
        config = builder.image_config(tag)["config"]
        path = dict(e.split("=", 1) for e in config["Env"])["PATH"]
        argv = container.get("command") or config.get("Entrypoint") or []
        assert argv, f"{where}: no command and {repository} has no entrypoint"
        found = _resolve(argv[0], files, path)
        assert found, f"{where}: {argv[0]} is not on PATH in {repository} ({path})"
        if posixpath.basename(argv[0]).startswith("python") and argv[1:2] == ["-m"]:
            assert _module_exists(argv[2], files), f"{where}: no module {argv[2]} in {repository}"
        checked.add(repository)
    assert checked == {"tau-core-controller", "taugrid-portal", "tau"}

"""Layer caching: the same inputs give the same image; a tau change rebuilds only the top."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

from hack.images import Builder, push, serve_registry
from hack.images.build import REPO

IMAGE = "controller"  # the smallest dependency set


def _tree_with_a_change(tmp_path: Path) -> Path:
    """A copy of this checkout's wheel sources with one extra tau module."""
    tree = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, tree / name)
    shutil.copytree(REPO / "tau", tree / "tau", ignore=ignore)
    shutil.copytree(REPO / "charts" / "taugrid", tree / "charts" / "taugrid", ignore=ignore)
    (tree / "tau" / "_layer_probe.py").write_text('"""Only in this copy."""\n')
    return tree


def test_unchanged_sources_give_the_same_digest_even_when_the_top_layer_is_rebuilt(
    builder: Builder, images
):
    first = images[IMAGE]
    again = builder.build([IMAGE])[0]
    assert again.digest == first.digest
    builder.run("test", ["umoci", "rm", "--image", f"{builder.layout}:{first.tag}"])
    rebuilt = builder.build([IMAGE])[0]
    assert rebuilt.tag == first.tag
    assert rebuilt.digest == first.digest


def test_a_tau_source_change_rebuilds_only_the_thin_top_layer(builder: Builder, images, tmp_path):
    said: list[str] = []
    changed_builder = Builder(builder.cache, progress=said.append)
    changed = changed_builder.build([IMAGE], source=_tree_with_a_change(tmp_path))[0]
    original = images[IMAGE]
    before = builder.manifest(original.tag)["layers"]
    after = builder.manifest(changed.tag)["layers"]
    assert changed.digest != original.digest
    assert [layer["digest"] for layer in after[:-1]] == [layer["digest"] for layer in before[:-1]]
    assert after[-1]["digest"] != before[-1]["digest"]
    assert after[-1]["size"] < 5_000_000
    assert not [line for line in said if "mmdebstrap" in line or "pip" in line], said
    site = "/opt/taugrid/lib/python3.11/site-packages/tau"
    assert f"{site}/_layer_probe.py" in builder.files(changed.tag)
    assert f"{site}/_layer_probe.py" not in builder.files(original.tag)


def test_the_image_config_is_the_containerfile_s(builder: Builder, images):
    config = builder.image_config(images[IMAGE].tag)["config"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["python3", "-m", "tau.controller"]
    assert config["Labels"]["org.opencontainers.image.title"] == "tau-core-controller"
    assert config["Labels"]["org.opencontainers.image.version"] == images[IMAGE].version


def test_a_pushed_image_is_served_by_tag_and_by_its_built_digest(builder, images, tmp_path):
    with serve_registry(tmp_path / "registry") as registry:
        (ref,) = push(builder, [images[IMAGE]], registry)
        assert ref.reference == f"{registry}/tau-core-controller@{images[IMAGE].digest}"
        accept = "application/vnd.oci.image.manifest.v1+json"
        for reference in (ref.digest, ref.tag):
            request = urllib.request.Request(
                f"http://{registry}/v2/{ref.repository}/manifests/{reference}",
                headers={"Accept": accept},
            )
            with urllib.request.urlopen(request, timeout=10) as response:
                assert response.headers["Docker-Content-Digest"] == images[IMAGE].digest
                manifest = json.loads(response.read())
        assert manifest["layers"] == builder.manifest(images[IMAGE].tag)["layers"]


def test_the_portal_image_carries_the_kueueviz_bundle_it_serves(builder: Builder, images):
    tag = images["portal"].tag
    files = builder.files(tag)
    assert "/opt/kueueviz/index.html" in files
    assert [f for f in files if f.startswith("/opt/kueueviz/assets/") and f.endswith(".js")]
    assert "TAU_KUEUEVIZ_BUNDLE=/opt/kueueviz" in builder.image_config(tag)["config"]["Env"]

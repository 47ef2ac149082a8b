"""charts/taugrid lints and renders offline as checked in; charts/taugrid-bundle, the published
chart, is the same chart plus Kueue and KubeRay, fetched by `helm dependency build`.

Helm refuses to render a chart whose declared dependencies are missing, even when their
conditions disable them, so the third-party charts are declared only by the bundle. The
official registry (mcr.microsoft.com) is unreachable here: the fetch is exercised against a
local HTTP chart repository serving stand-in `kueue` and `kuberay-operator` charts at the
pinned versions, with the bundle's repository rewritten to it in a copy.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tau import keys

from .conftest import CHART, NAMESPACE, OFFLINE, ROOT

BUNDLE = ROOT / keys.BUNDLE_CHART_DIR
REGISTRY = "oci://mcr.microsoft.com/aks/ai-runtime/helm"
OFF = [arg for item in OFFLINE for arg in ("--set", item)]


def _chart(path: Path) -> dict:
    return yaml.safe_load((path / "Chart.yaml").read_text())


def _helm(helm: str, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None):
    return subprocess.run(
        [helm, *args], capture_output=True, text=True, check=False, env=env, cwd=cwd
    )


def test_the_checked_in_chart_lints_strictly_and_renders_offline(helm):
    lint = _helm(helm, "lint", "--strict", str(CHART), *OFF)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    done = _helm(helm, "template", "t", str(CHART), "--namespace", NAMESPACE, *OFF)
    assert done.returncode == 0, done.stderr
    kinds = {d["kind"] for d in yaml.safe_load_all(done.stdout) if d}
    assert {"Deployment", "ClusterQueue", "ResourceFlavor"} <= kinds


def test_the_checked_in_chart_with_an_operator_enabled_fails_naming_the_bundle(helm):
    done = _helm(helm, "template", "t", str(CHART), "--namespace", NAMESPACE)
    assert done.returncode != 0
    assert "components.kueue.enabled is true but the kueue chart is not vendored" in done.stderr
    assert f"helm dependency build {keys.BUNDLE_CHART_DIR}" in done.stderr


def test_the_bundle_is_the_checked_in_chart_plus_the_pinned_operators():
    bundle, umbrella = _chart(BUNDLE), _chart(CHART)
    for field in ("name", "version", "appVersion", "kubeVersion", "description"):
        assert bundle[field] == umbrella[field], field
    first_party = [d for d in bundle["dependencies"] if not d["repository"]]
    assert first_party == umbrella["dependencies"]
    third_party = {d["name"]: d for d in bundle["dependencies"] if d["repository"]}
    assert {name: (d["version"], d["repository"]) for name, d in third_party.items()} == {
        "kueue": ("0.18.2", REGISTRY),
        "kuberay-operator": ("1.6.2", REGISTRY),
    }
    for name, switch in keys.CHART_OPERATORS:
        assert third_party[name]["condition"] == switch
    for link in ("templates", "values.yaml", "values.schema.json", ".helmignore"):
        assert (BUNDLE / link).resolve() == (CHART / link).resolve(), link
    for sub in first_party:
        assert (BUNDLE / "charts" / sub["name"]).resolve() == CHART / "charts" / sub["name"]


def _stand_in_operator(directory: Path, name: str, version: str) -> None:
    chart = directory / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v2", "name": name, "version": version})
    )
    (chart / "templates" / "marker.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
        f"  name: {name}-stand-in\n  namespace: {{{{ .Release.Namespace }}}}\n"
    )


@pytest.fixture
def chart_repository(helm, tmp_path) -> Iterator[tuple[str, dict[str, str]]]:
    """A served chart repository holding the stand-in operators, and a helm environment
    (config, cache, data) of its own that knows it."""
    served = tmp_path / "repository"
    sources = tmp_path / "sources"
    served.mkdir()
    env = {
        **os.environ,
        "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
        "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
        "HELM_DATA_HOME": str(tmp_path / "helm-data"),
    }
    for name, version in (("kueue", "0.18.2"), ("kuberay-operator", "1.6.2")):
        _stand_in_operator(sources, name, version)
        done = _helm(helm, "package", str(sources / name), "-d", str(served), env=env)
        assert done.returncode == 0, done.stderr
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    url = f"http://127.0.0.1:{server.server_port}"
    assert _helm(helm, "repo", "index", str(served), "--url", url, env=env).returncode == 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    added = _helm(helm, "repo", "add", "stand-in", url, env=env)
    assert added.returncode == 0, added.stderr
    yield url, env
    server.shutdown()
    server.server_close()


def _status(*paths: str) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--ignored", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_dependency_build_fetches_the_operators_and_the_bundle_then_renders_them(
    helm, chart_repository, tmp_path
):
    url, env = chart_repository
    before = _status("charts")
    work = tmp_path / "checkout" / "charts"
    shutil.copytree(CHART, work / "taugrid", symlinks=True)
    shutil.copytree(BUNDLE, work / "taugrid-bundle", symlinks=True)
    bundle = work / "taugrid-bundle"
    meta = (bundle / "Chart.yaml").read_text()
    (bundle / "Chart.yaml").write_text(meta.replace(REGISTRY, url))

    built = _helm(helm, "dependency", "build", str(bundle), env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    fetched = sorted(p.name for p in (bundle / "charts").glob("*.tgz"))
    assert fetched == ["kuberay-operator-1.6.2.tgz", "kueue-0.18.2.tgz"]
    assert (bundle / "Chart.lock").is_file()
    assert all((bundle / "charts" / sub).is_symlink() for sub in ("taugrid-core", "gpu-monitoring"))

    lint = _helm(helm, "lint", "--strict", str(bundle), env=env)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    done = _helm(helm, "template", "t", str(bundle), "--namespace", NAMESPACE, env=env)
    assert done.returncode == 0, done.stderr
    names = {(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(done.stdout) if d}
    assert ("ConfigMap", "kueue-stand-in") in names
    assert ("ConfigMap", "kuberay-operator-stand-in") in names
    assert any(kind == "ClusterQueue" for kind, _ in names), "the taugrid objects are there too"
    off = _helm(helm, "template", "t", str(bundle), "--namespace", NAMESPACE, *OFF, env=env)
    assert "kueue-stand-in" not in off.stdout, "the switch still turns an operator off"
    assert _status("charts") == before, "the checkout is untouched"

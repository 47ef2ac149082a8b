"""Real `helm` against charts/taugrid, and the schemas rendered objects must satisfy.

Kueue and KubeRay are pinned dependencies that are not vendored in the repository, so every
render disables them (exactly as an offline operator would) and goes through
`tau.cluster.chart.renderable`, the same path `tau cluster install` uses.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tau.cluster.chart import ChartRef, renderable

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "taugrid"
PROFILES = {
    "default": None,
    "cpu-only": CHART / "profiles" / "cpu-only.yaml",
    "h200-pool": CHART / "profiles" / "h200-pool.yaml",
    "a100-pool": CHART / "profiles" / "a100-pool.yaml",
    "multikueue": CHART / "profiles" / "multikueue.yaml",
}
OFFLINE = ["components.kueue.enabled=false", "components.kuberayOperator.enabled=false"]
NAMESPACE = "tau-system"


@pytest.fixture(scope="session")
def helm() -> str:
    found = shutil.which("helm") or str(ROOT / ".venv" / "bin" / "helm")
    if not Path(found).is_file():
        raise AssertionError("helm is not installed: run hack/setup/10-helm.sh")
    return found


class RenderError(Exception):
    """helm refused to render; the message is helm's stderr."""


@pytest.fixture(scope="session")
def render(helm: str) -> Callable[..., list[dict[str, Any]]]:
    def run(
        *sets: str,
        values: Path | None = None,
        namespace: str = NAMESPACE,
        include_crds: bool = False,
        offline: bool = True,
    ) -> list[dict[str, Any]]:
        args = ["template", "t", "", "--namespace", namespace]
        if include_crds:
            args.append("--include-crds")
        if values is not None:
            args += ["-f", str(values)]
        for item in [*(OFFLINE if offline else []), *sets]:
            # "json:key=<json>" goes through --set-json (empty lists/maps, whole entries).
            if item.startswith("json:"):
                args += ["--set-json", item.removeprefix("json:")]
            else:
                args += ["--set", item]
        with renderable(ChartRef(str(CHART))) as chart:
            args[2] = chart
            done = subprocess.run([helm, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RenderError(done.stderr.strip())
        return [d for d in yaml.safe_load_all(done.stdout) if isinstance(d, dict) and d.get("kind")]

    return run


def _go_module_dir(module: str, version: str) -> Path:
    done = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"go mod download {module}@{version} failed: {done.stderr.strip()}")
    return Path(json.loads(done.stdout)["Dir"])


@pytest.fixture(scope="session")
def kueue_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> openAPIV3Schema from the Kueue CRDs the local cluster runs."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from hack.localcluster.build import COMPONENTS

    kueue = next(c for c in COMPONENTS if c.name == "kueue")
    crd_dir = _go_module_dir(kueue.module, kueue.version()) / "config/components/crd/bases"
    return crd_schemas(sorted(crd_dir.glob("*.yaml")))


def crd_schemas(paths: list[Path]) -> dict[tuple[str, str], dict[str, Any]]:
    schemas = {}
    for path in paths:
        for crd in yaml.safe_load_all(path.read_text()):
            if not crd or crd.get("kind") != "CustomResourceDefinition":
                continue
            group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
            for version in crd["spec"]["versions"]:
                schemas[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return schemas


@pytest.fixture(scope="session")
def tau_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    crds = CHART / "charts" / "tau-core-controller" / "crds"
    paths = sorted(crds.glob("*.yaml"))
    assert paths, f"no Tau CRDs in {crds}: run `python -m tau.api.crds`"
    return crd_schemas(paths)

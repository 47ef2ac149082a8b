"""Which chart to install, and making a local checkout renderable without its missing deps.

Helm refuses to render a chart whose Chart.yaml declares a dependency missing from `charts/`,
even when that dependency's condition disables it. So the checked-in `charts/taugrid` declares
only its first-party sub-charts and renders offline as it is; the published chart is
`charts/taugrid-bundle`, the same templates, values and sub-charts (linked) plus the pinned
Kueue and KubeRay charts, which `helm dependency build` fetches. A local bundle whose
third-party charts were not fetched is rendered from a temporary copy whose Chart.yaml omits
exactly those. Either way the chart's guard template fails while an operator is enabled but
absent, so nothing is silently dropped.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tau import keys, safeyaml
from tau.errors import ValidationError
from tau.version import __version__

DEFAULT_CHART = "oci://mcr.microsoft.com/aks/ai-runtime/helm/taugrid"
DEFAULT_CHART_VERSION = __version__
DEFAULT_RELEASE = "taugrid"
DEFAULT_NAMESPACE = "tau-system"


@dataclass(frozen=True)
class ChartRef:
    """A chart reference as given by `--chart` plus the requested `--version`."""

    ref: str
    version: str = DEFAULT_CHART_VERSION

    @property
    def local_dir(self) -> Path | None:
        path = Path(self.ref).expanduser()
        return path if path.is_dir() else None

    @property
    def name(self) -> str:
        """The chart name Helm records: Chart.yaml's name, or the reference's last segment."""
        if self.local_dir is not None:
            return str(read_chart_yaml(self.local_dir).get("name", ""))
        last = self.ref.rstrip("/").rsplit("/", 1)[-1]
        return last.rsplit(":", 1)[0] if ":" in last and "://" not in last else last

    def version_args(self) -> list[str]:
        """`--version` only means something for repository and OCI references."""
        return [] if self.local_dir is not None or not self.version else ["--version", self.version]


def read_chart_yaml(chart_dir: Path) -> dict[str, Any]:
    path = chart_dir / "Chart.yaml"
    try:
        data = safeyaml.load(path.read_text())
    except (OSError, UnicodeDecodeError, safeyaml.YamlRefused) as error:
        raise ValidationError(
            f"--chart {chart_dir}: cannot read Chart.yaml ({type(error).__name__})",
            owner="platform operator",
        ) from None
    if not isinstance(data, dict):
        raise ValidationError(f"--chart {chart_dir}: Chart.yaml is not a mapping")
    return data


def unvendored_dependencies(chart_dir: Path) -> list[str]:
    """Dependencies declared in Chart.yaml that are neither unpacked nor archived in charts/."""
    missing = []
    charts = chart_dir / "charts"
    for dep in read_chart_yaml(chart_dir).get("dependencies") or []:
        name = dep.get("name", "")
        unpacked = (charts / name / "Chart.yaml").is_file()
        archived = any(charts.glob(f"{name}-*.tgz")) if charts.is_dir() else False
        if not (unpacked or archived):
            missing.append(name)
    return missing


def absent_operators(chart_dir: Path) -> list[tuple[str, str, bool]]:
    """(name, values switch, declared) of each optional operator the local chart cannot
    render: not a dependency of it at all, or declared but not fetched."""
    declared = {dep.get("name", "") for dep in read_chart_yaml(chart_dir).get("dependencies") or []}
    missing = set(unvendored_dependencies(chart_dir))
    return [
        (name, switch, name in declared)
        for name, switch in keys.CHART_OPERATORS
        if name not in declared or name in missing
    ]


@contextmanager
def renderable(chart: ChartRef) -> Iterator[str]:
    """Yield a reference Helm can render: the chart itself, or a copy without unvendored deps."""
    chart_dir = chart.local_dir
    missing = unvendored_dependencies(chart_dir) if chart_dir is not None else []
    if chart_dir is None or not missing:
        yield chart.ref
        return
    with tempfile.TemporaryDirectory(prefix="taugrid-chart-") as tmp:
        copy = Path(tmp) / chart_dir.name
        # The bundle links charts/taugrid's files: copy what the links name, not the links.
        shutil.copytree(chart_dir, copy, symlinks=False)
        meta = read_chart_yaml(copy)
        meta["dependencies"] = [
            dep for dep in meta.get("dependencies") or [] if dep.get("name") not in missing
        ]
        (copy / "Chart.yaml").write_text(yaml.safe_dump(meta, sort_keys=False))
        (copy / "Chart.lock").unlink(missing_ok=True)
        yield str(copy)

"""One version names the release: tau, the chart and its first-party sub-charts, the images."""

from __future__ import annotations

import yaml

from tau import __version__
from tau.cluster.chart import DEFAULT_CHART_VERSION

from .conftest import CHART

FIRST_PARTY = ("tau-core-controller", "taugrid-core")


def _chart(path) -> dict:
    return yaml.safe_load((path / "Chart.yaml").read_text())


def test_the_chart_and_the_cli_default_are_tau_s_version():
    umbrella = _chart(CHART)
    assert umbrella["version"] == umbrella["appVersion"] == __version__
    assert __version__ == DEFAULT_CHART_VERSION


def test_first_party_sub_charts_are_released_with_the_umbrella():
    pinned = {d["name"]: d["version"] for d in _chart(CHART)["dependencies"]}
    for name in FIRST_PARTY:
        sub = _chart(CHART / "charts" / name)
        assert sub["version"] == sub["appVersion"] == pinned[name] == __version__, name

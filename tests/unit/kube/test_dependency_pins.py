"""Every extra that installs the Kubernetes client allows only versions tau.kube works with.

The controller reconciles through tau.kube's client (ApiClient.param_serialize, generator 37+),
so an extra with a looser pin installs a controller that fails at its first request.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[3] / "pyproject.toml"


def kubernetes_pins() -> dict[str, str]:
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    pins = {}
    for extra, requirements in extras.items():
        for text in requirements:
            requirement = Requirement(text)
            if requirement.name == "kubernetes":
                pins[extra] = str(requirement.specifier)
    return pins


def test_the_controller_extra_pins_the_client_tau_kube_needs():
    pins = kubernetes_pins()
    assert pins["kube"] == ">=37"
    assert pins["controller"] == pins["kube"]


def test_no_extra_allows_an_older_client_than_tau_kube():
    assert set(kubernetes_pins().values()) == {">=37"}

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tau.cluster.helm import Helm

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def helm4() -> Helm:
    """The real Helm 4 binary the project installs (hack/setup/10-helm.sh)."""
    found = shutil.which("helm") or str(ROOT / ".venv" / "bin" / "helm")
    if not Path(found).is_file():
        raise AssertionError("helm is not installed: run hack/setup/10-helm.sh")
    helm = Helm(found)
    assert helm.major == 4, f"expected Helm 4, found {helm.version}"
    return helm


@pytest.fixture
def helm3(tmp_path: Path) -> Helm:
    """A stand-in that answers like Helm 3: no --rollback-on-failure, no --force-conflicts."""
    script = tmp_path / "helm3"
    script.write_text(
        "#!/bin/sh\n"
        'case "$1 $2" in\n'
        '  "version --short") echo "v3.19.0+g3d8990f" ;;\n'
        '  "upgrade --help") echo "      --atomic    if set, upgrade process rolls back" ;;\n'
        "esac\n"
    )
    script.chmod(0o755)
    return Helm(str(script))

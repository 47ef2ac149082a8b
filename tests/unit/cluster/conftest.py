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


class RecordingHelm:
    """A stand-in helm that answers per subcommand from a table and records every call.

    Used for flow decisions (which Helm calls happen, in which order); the real helm runs these
    flows in tests/e2e against the local control plane.
    """

    def __init__(self, tmp_path: Path, answers: dict[str, tuple[int, str]]) -> None:
        import json
        import sys

        self.log = tmp_path / "calls.jsonl"
        table = tmp_path / "answers.json"
        table.write_text(json.dumps(answers))
        script = tmp_path / "helm"
        script.write_text(
            f"#!{sys.executable}\n"
            "import json, sys\n"
            f"open({str(self.log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
            f"answers = json.load(open({str(table)!r}))\n"
            "key = ' '.join(sys.argv[1:3])\n"
            "code, out = answers.get(key, answers.get(sys.argv[1], [0, '']))\n"
            "sys.stdout.write(out)\n"
            "sys.exit(code)\n"
        )
        script.chmod(0o755)
        self.helm = Helm(str(script))

    def calls(self) -> list[list[str]]:
        import json

        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

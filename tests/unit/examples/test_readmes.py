"""Every example README's `## Offline` block runs as printed, from the repository root.

Those are the commands a reader tries first, before any cluster exists; each must succeed as
written (exit 0, no traceback), so a renamed flag or a moved file breaks this test rather than
the reader.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
TAU = str(Path(sys.executable).parent / "tau")


def offline_commands() -> list[tuple[str, str]]:
    found = []
    for readme in sorted(REPO.glob("examples/*/README.md")):
        section = re.search(r"^## Offline\n(.*?)(?=^## |\Z)", readme.read_text(), re.S | re.M)
        if section is None:
            continue
        for block in re.findall(r"```bash\n(.*?)```", section.group(1), re.S):
            found += [(readme.parent.name, line) for line in block.splitlines() if line.strip()]
    return found


COMMANDS = offline_commands()


def test_the_examples_that_document_offline_commands_are_all_collected():
    assert {example for example, _ in COMMANDS} >= {
        "aks-gpu-quickstart",
        "cpu-multi-interest-ray",
        "kind-smoke",
        "ray-tune-smoke",
    }


@pytest.mark.parametrize(("example", "command"), COMMANDS, ids=[c for _, c in COMMANDS])
def test_an_offline_command_from_a_readme_succeeds_as_printed(example: str, command: str):
    argv = shlex.split(command)
    assert argv[0] == "tau", f"examples/{example}/README.md: offline commands are tau commands"
    done = subprocess.run(
        [TAU, *argv[1:]], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr

"""The dependency set of an image: pyproject's dependencies plus the image's extras.

Both builds read the set from here, so the dependency layer changes only when pyproject's
dependency lists do, never when tau's source does: the Containerfiles run this file as a script
(standard library only, it runs in the image's own Python before anything is installed) and the
daemonless builder imports it to key its cached dependency layer.

    python3 requirements.py pyproject.toml kube,portal,adx,runtime
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

_SELF = re.compile(r"^\s*([A-Za-z0-9._-]+)\s*\[([^\]]*)\]\s*$")


def requirements(pyproject: Path, extras: list[str]) -> list[str]:
    """Requirement lines: base dependencies, then each extra, self-references expanded."""
    project = tomllib.loads(pyproject.read_text())["project"]
    name = _normalize(project["name"])
    optional = project.get("optional-dependencies", {})
    lines: list[str] = []
    seen: set[str] = set()

    def add(spec: str) -> None:
        match = _SELF.match(spec)
        if match and _normalize(match.group(1)) == name:
            for extra in match.group(2).split(","):
                expand(extra.strip())
        elif spec not in lines:
            lines.append(spec)

    def expand(extra: str) -> None:
        if extra in seen:
            return
        if extra not in optional:
            raise KeyError(f"pyproject.toml has no optional-dependencies extra {extra!r}")
        seen.add(extra)
        for spec in optional[extra]:
            add(spec)

    for spec in project.get("dependencies", []):
        add(spec)
    for extra in extras:
        if extra:
            expand(extra)
    return lines


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: requirements.py PYPROJECT EXTRA[,EXTRA...]", file=sys.stderr)
        return 2
    try:
        lines = requirements(Path(argv[0]), argv[1].split(","))
    except (OSError, KeyError, tomllib.TOMLDecodeError) as error:
        print(f"requirements.py: {error}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The Helm binary: discovery, version/flag detection and one-call execution.

Flags differ between Helm 3 and 4 (`--atomic` became `--rollback-on-failure`; Helm 4 applies
server-side and needs `--force-conflicts` on AKS), so features are detected from the binary's
own `--help` rather than from a version number.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cached_property

from tau.errors import RuntimeFailure

HELM_OWNER = "platform operator"
# "execution error at (taugrid/templates/guards.yaml:12:6): " before a chart `fail` message.
_TEMPLATE_LOCATION = re.compile(r"^execution error at \([^)]*\): ")


@dataclass(frozen=True)
class HelmResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def error_line(self) -> str:
        """Helm's own `Error:` line, without the template location of a chart `fail`."""
        lines = [line.strip() for line in (self.stderr or self.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("Error:")]
        line = (errors or lines or [f"exit code {self.returncode}"])[-1].removeprefix("Error: ")
        return _TEMPLATE_LOCATION.sub("", line)


@dataclass
class Helm:
    """One Helm binary. `binary=None` finds `helm` on PATH."""

    binary: str | None = None
    calls: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.binary is None:
            self.binary = shutil.which("helm")
        if not self.binary:
            raise RuntimeFailure(
                "helm not found on PATH",
                hint="install Helm 3 or 4 (https://helm.sh/docs/intro/install/)",
                owner=HELM_OWNER,
            )

    def run(self, args: list[str], *, timeout: float | None = None) -> HelmResult:
        self.calls.append(list(args))
        try:
            done = subprocess.run(
                [str(self.binary), *args],
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return HelmResult(args, 124, "", f"helm {args[0]} timed out after {timeout:.0f}s")
        except OSError as error:
            raise RuntimeFailure(
                f"cannot run helm ({self.binary}): {error.strerror}", owner=HELM_OWNER
            ) from None
        return HelmResult(args, done.returncode, done.stdout, done.stderr)

    @cached_property
    def version(self) -> str:
        result = self.run(["version", "--short"])
        return result.stdout.strip() if result.ok else ""

    @cached_property
    def major(self) -> int:
        digits = self.version.lstrip("v").split(".", 1)[0]
        return int(digits) if digits.isdigit() else 3

    @cached_property
    def _upgrade_help(self) -> str:
        result = self.run(["upgrade", "--help"])
        return result.stdout if result.ok else ""

    def upgrade_supports(self, flag: str) -> bool:
        """Whether `helm upgrade --help` advertises `flag` (e.g. `--force-conflicts`)."""
        return f"{flag} " in self._upgrade_help or f"{flag}=" in self._upgrade_help

"""Config problems with their place in the file, and the error that carries them."""

from __future__ import annotations

from dataclasses import dataclass

from tau.errors import ValidationError

OWNER = "run config author"


@dataclass(frozen=True)
class ConfigIssue:
    """One problem or warning: the file, where in it, the dotted field path and what is wrong."""

    file: str
    path: str  # dotted field path, "" for the document itself
    message: str
    line: int | None = None
    column: int | None = None

    @property
    def location(self) -> str:
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"

    def __str__(self) -> str:
        if not self.path or _names_itself(self.message, self.path):
            return f"{self.location}: {self.message}"
        return f"{self.location}: {self.path}: {self.message}"


def _names_itself(message: str, path: str) -> bool:
    """Reference messages often start with their field (`compute.gpus must be >= 0`)."""
    if message.startswith(path):
        rest = message[len(path) :]
        return not rest or not (rest[0].isalnum() or rest[0] == "_")
    return f'"{path}"' in message


class ConfigError(ValidationError):
    """A run config that failed to load; `issues` lists every independent problem."""

    def __init__(self, file: str, issues: list[ConfigIssue]) -> None:
        self.issues = sorted(issues, key=lambda i: (i.line or 0, i.column or 0))
        if len(self.issues) == 1:
            super().__init__(str(self.issues[0]), owner=OWNER)
        else:
            super().__init__(
                f"{file}: {len(self.issues)} problems in the run config",
                problems=[str(issue) for issue in self.issues],
                hint="fix each one and rerun `tau run validate`",
                owner=OWNER,
            )

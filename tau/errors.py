"""The error types a user can cause, and how they reach the terminal.

Every failure a user can trigger ends as one line naming what is wrong (a field, flag or
layer), what to do next, and who owns the fix. Commands raise these; the CLI entry point is
the only place that prints them and picks the exit code.
"""

from __future__ import annotations

EXIT_RUNTIME = 1
EXIT_USAGE = 2


class TauError(Exception):
    """A failure with a user-facing message; never shown with a traceback."""

    exit_code = EXIT_RUNTIME

    def __init__(self, message: str, *, hint: str = "", owner: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.owner = owner

    def one_line(self) -> str:
        text = self.message.rstrip(".")
        if self.hint:
            text += f"; {self.hint.rstrip('.')}"
        if self.owner:
            text += f" (owner: {self.owner})"
        return text


class UsageError(TauError):
    """Wrong flags or arguments: exit 2."""

    exit_code = EXIT_USAGE


class ValidationError(TauError):
    """Input that violates a contract (config, descriptor, values): exit 2.

    `problems` holds every independent violation found in one pass, so a user fixes a file
    once instead of once per error.
    """

    exit_code = EXIT_USAGE

    def __init__(
        self,
        message: str,
        *,
        problems: list[str] | None = None,
        hint: str = "",
        owner: str = "",
    ) -> None:
        super().__init__(message, hint=hint, owner=owner)
        self.problems = list(problems or [])


class RuntimeFailure(TauError):
    """Something outside the user's input failed (cluster, store, process): exit 1."""

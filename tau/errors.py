"""The error types a user can cause, and how they reach the terminal.

Every failure a user can trigger ends as one line naming what is wrong (a field, flag or
layer), what to do next, and who owns the fix. Commands raise these; the CLI entry point is
the only place that prints them and picks the exit code.
"""

from __future__ import annotations

import re

from tau import credentials

EXIT_RUNTIME = 1
EXIT_USAGE = 2

MAX_LINE = 2000  # characters of one printed error line
MAX_VALUE = 80  # characters of one quoted value inside it
_MARGIN = 256  # longer than any token shape: a token cut by a limit is still redacted whole

# C0/C1 controls (newlines and terminal escapes included), DEL, the Unicode line and
# paragraph separators, and the bidi overrides that can make a line read differently.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_LONG = re.compile(
    rf"\"[^\"]{{{MAX_VALUE + 1},}}\"|'[^']{{{MAX_VALUE + 1},}}'|[^\s\"']{{{3 * MAX_VALUE},}}"
)


_OMITTED = re.compile(r" \[\.\.\. (\d+) characters \.\.\.\] ")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return repr(char)[1:-1] if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def _shorten(match: re.Match[str]) -> str:
    text = match.group()
    quote = text[0] if text[0] in "\"'" else ""
    body = text[1:-1] if quote else text
    kept = credentials.redact(body[: MAX_VALUE + _MARGIN])[: MAX_VALUE - 20]
    size = len(body)
    omitted = _OMITTED.search(body)  # a huge message was windowed first: count what was cut
    if omitted:
        size += int(omitted.group(1)) - len(omitted.group())
    return f"{quote}{kept}...{quote} ({size} characters)"


def _head(text: str) -> str:
    """A prefix cut at a word boundary: a token cut in half would escape redaction."""
    space = max(text.rfind(" ", len(text) - _MARGIN), text.rfind("\n", len(text) - _MARGIN))
    return text[:space] if space > 0 else text[:-_MARGIN]


def _tail(text: str) -> str:
    space = min(
        (i for i in (text.find(" ", 0, _MARGIN), text.find("\n", 0, _MARGIN)) if i >= 0), default=-1
    )
    return text[space + 1 :] if space >= 0 else text[_MARGIN:]


def clean(text: str, limit: int = MAX_LINE) -> str:
    """One safe terminal line from any message: credentials redacted, control characters
    escaped, long values and the whole line truncated.

    Every user-facing error passes through here, so a value echoed from hostile input (an
    8 MB name, a pasted token, `\\x1b[2J`) can neither flood, repaint nor leak. Long values
    are shortened before the (slower) credential scan, which then sees a short line only.
    """
    if len(text) > 32 * limit:
        head, tail = _head(text[: 16 * limit]), _tail(text[-4 * limit :])
        text = f"{head} [... {len(text) - len(head) - len(tail)} characters ...] {tail}"
    text = _LONG.sub(_shorten, text)
    cut = len(text) > limit
    text = credentials.redact(text[: limit + _MARGIN])
    text = _CONTROL.sub(_escape, text)
    if cut or len(text) > limit:
        text = f"{text[:limit]}... (message truncated)"
    return text


class TauError(Exception):
    """A failure with a user-facing message; never shown with a traceback."""

    exit_code = EXIT_RUNTIME

    def __init__(self, message: str, *, hint: str = "", owner: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.owner = owner

    def one_line(self) -> str:
        text = clean(self.message).rstrip(".")
        if self.hint:
            text += f"; {clean(self.hint).rstrip('.')}"
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

"""Identifier rules shared by every record: ids users type must be safe path components."""

from __future__ import annotations

import re

from tau.errors import ValidationError

_ID = re.compile(r"^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$")


MAX_ID = 128  # a path component (and room for its `run=` prefix) stays under NAME_MAX


def check_id(kind: str, value: str, *, flag: str = "") -> str:
    if len(value or "") > MAX_ID:
        where = f" ({flag})" if flag else ""
        raise ValidationError(
            f"{kind} id{where} is {len(value)} characters long; at most {MAX_ID} are allowed",
            owner="the user naming the record",
        )
    if not _ID.match(value or ""):
        where = f" ({flag})" if flag else ""
        raise ValidationError(
            f"{kind} id {value!r}{where} is invalid: use lowercase letters, digits and inner "
            "'-', '_' or '.', starting and ending with a letter or digit",
            hint=f"try {slug(value)!r}" if slug(value) else "",
            owner="the user naming the record",
        )
    return value


def slug(title: str) -> str:
    """An id derived from a human title: 'NanoGPT API surface' -> 'nanogpt-api-surface'."""
    text = re.sub(r"[^a-z0-9._-]+", "-", (title or "").strip().lower())
    # A run of separators holding a dash is one dash: 'x/../y' -> 'x-y', never 'x-..-y'.
    text = re.sub(r"[-._]*-[-._]*|\.{2,}", "-", text)
    return re.sub(r"^[-._]+|[-._]+$", "", text)


def safe_id(value: str, default: str = "default") -> str:
    """An id from arbitrary text, for defaults derived from names users did not type as ids."""
    if len(value or "") <= MAX_ID and _ID.match(value or ""):
        return value
    return slug(value)[:MAX_ID].rstrip("-._") or default

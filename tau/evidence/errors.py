"""Store-specific failures, all one-line TauErrors."""

from __future__ import annotations

from tau.errors import RuntimeFailure


class StoreConflict(RuntimeFailure):
    """A write that would overwrite different stored content, or a busy store lock."""


class StoreCorrupt(RuntimeFailure):
    """The store on disk is unreadable or from a newer TauGrid than this one."""

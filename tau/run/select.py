"""The one place that picks the engine behind a command.

`tau run` and its lifecycle verbs resolve a backend once, from `--local` or from the run
itself (a NAME that is a local run record is the local engine's), then call it; no command
routes verb by verb.
"""

from __future__ import annotations

from tau.run.backend import Backend, Route


def is_local(name: str | None, *, local: bool) -> bool:
    """--local, or a NAME that is a local run record. A cluster problem is never answered by
    reading something local instead, so nothing else routes here."""
    if local:
        return True
    from tau.engine import records

    return bool(name) and records.exists(name or "")


def select(name: str | None, *, local: bool, route: Route, data_root: str = "") -> Backend:
    if is_local(name, local=local):
        from tau.run.local import LocalBackend

        return LocalBackend(data_root=data_root)
    from tau.run.cluster import ClusterBackend

    return ClusterBackend(route)

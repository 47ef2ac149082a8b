"""`dataset:NAME@TOKEN` in a run's `runtime.env`: pinned to a version when the run is submitted.

Direct run configs and managed workflow manifests alike.

A run names a dataset by reference (`MNIST_DIR: dataset:mnist@latest`); at submission tau
reads the registry on the run's own data PVC, replaces the value with the pinned version's
path under /data and records `name@version` and its digest on the workload
(`tau.azure.com/datasets`), so the run is reproducible even after the alias moves. Client
dry-run renders offline and leaves references as written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from tau.data import layout
from tau.data.refs import DatasetRef, is_dataset_reference, parse_dataset_reference
from tau.errors import UsageError, ValidationError

if TYPE_CHECKING:
    from tau.data.root import Root
    from tau.render.intent import RunIntent
    from tau.render.workflow import WorkflowIntent

# A direct run's intent or a managed workflow's; binding returns the same kind.
Intent = TypeVar("Intent", "RunIntent", "WorkflowIntent")

RESEARCHER = "researcher (run config)"


def references(env: tuple[tuple[str, str], ...]) -> list[tuple[str, DatasetRef]]:
    """The `dataset:` values of an env, parsed (a malformed one is a usage error)."""
    found = []
    for name, value in env:
        if is_dataset_reference(value):
            try:
                found.append((name, parse_dataset_reference(value)))
            except UsageError as error:
                raise UsageError(
                    f"runtime.env.{name}: {value!r} is not a dataset reference "
                    f"(dataset:NAME[@VERSION|@ALIAS]): {error.message}"
                ) from None
    return found


def _pairs(intent: RunIntent | WorkflowIntent) -> tuple[tuple[str, str], ...]:
    """(name, literal value) of a direct run's or a managed workflow's env."""
    from tau.render.workflow import WorkflowIntent

    if isinstance(intent, WorkflowIntent):
        return tuple((e.name, e.value) for e in intent.env if e.value is not None)
    return intent.env


def _claim(intent: RunIntent | WorkflowIntent) -> str | None:
    from tau.render.volumes import data_claim
    from tau.render.workflow import WorkflowIntent

    return intent.data_pvc if isinstance(intent, WorkflowIntent) else data_claim(intent)


def _pinned(
    intent: Intent, pinned: dict[str, str], recorded: tuple[tuple[str, str], ...]
) -> Intent:
    from tau.render.workflow import WorkflowIntent

    if isinstance(intent, WorkflowIntent):
        env = tuple(
            dataclasses.replace(e, value=pinned[e.name]) if e.name in pinned else e
            for e in intent.env
        )
        return dataclasses.replace(intent, env=env, datasets=recorded)
    pairs = tuple((name, pinned.get(name, value)) for name, value in intent.env)
    return dataclasses.replace(intent, env=pairs, datasets=recorded)


def unbound_warning(intent: RunIntent | WorkflowIntent) -> str | None:
    refs = references(_pairs(intent))
    if not refs:
        return None
    shown = ", ".join(f"{name}=dataset:{ref}" for name, ref in refs)
    return (
        f"client dry-run leaves {shown} as written; submission (or --dry-run=server) pins "
        "them to registered versions on the data PVC"
    )


def bind(intent: Intent, open_root: Callable[[str], Root]) -> Intent:
    """The intent with every dataset reference replaced by its pinned path under /data.

    `open_root(pvc)` returns the registry root on that PVC (a helper pod reads it).
    """
    refs = references(_pairs(intent))
    if not refs:
        return intent
    claim = _claim(intent)
    if not claim:
        raise ValidationError(
            f"runtime.env {refs[0][0]} references dataset:{refs[0][1]}, but the run mounts no "
            "data PVC at /data; set storage.data_pvc (the registry and its bytes live there)",
            owner=RESEARCHER,
        )
    # The registry (and its pydantic records) loads only here: client dry-run never binds.
    from tau.data import datasets

    root = open_root(claim)
    pinned: dict[str, str] = {}
    recorded: list[tuple[str, str]] = []
    for env_name, ref in refs:
        record = datasets.resolve(root, ref)
        if not record.prefix:
            raise ValidationError(
                f"runtime.env.{env_name}: dataset {record.name}@{record.version} records no "
                "location on the data PVC",
                owner=RESEARCHER,
            )
        pinned[env_name] = layout.in_pod(record.prefix)
        recorded.append((f"{record.name}@{record.version}", record.digest))
    return _pinned(intent, pinned, tuple(dict.fromkeys(recorded)))

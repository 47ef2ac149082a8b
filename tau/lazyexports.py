"""Package faces whose names load their module on first use.

An offline command that needs one name of a face package (`tau.connection`, `tau.evidence`)
must not pay for the package's other modules and the heavy libraries they import, so such a
package maps each public name to the submodule that defines it and resolves it lazily.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, homes: Mapping[str, str], namespace: dict[str, object]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module-level `__getattr__` and `__dir__` for `package`, whose `homes` map each
    public name to its submodule; a resolved name is cached in the package's `namespace`."""

    def __getattr__(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *homes])

    return __getattr__, __dir__

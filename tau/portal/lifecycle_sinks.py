"""Where the lifecycle recorder writes: the workspace store (default) and ADX.

The store sink is what gives the Portal `historyState: available`; the recorder's restart
seed comes from it too. The ADX sink (`tau.portal.kusto.KustoSink`) is write-only.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tau.errors import RuntimeFailure
from tau.evidence import lifecycle


@dataclass
class StoreSink:
    root: Path
    name: str = "store"

    def seed(self, scope: Any) -> dict[str, dict[str, Any]]:
        last: dict[str, dict[str, Any]] = {}
        for row in lifecycle.rows(self.root):
            if row["namespace"] != scope.namespace or row["cluster"] != scope.cluster:
                continue
            seen = last.get(row["durable_id"])
            if seen is not None and seen["state"] in lifecycle.TERMINAL:
                continue
            last[row["durable_id"]] = row
        return last

    def write(self, rows: list[dict[str, Any]]) -> None:
        try:
            lifecycle.append(self.root, rows)
        except (OSError, ValueError, sqlite3.Error) as error:
            raise RuntimeFailure(
                f"cannot write lifecycle rows to {self.root}: {error}",
                owner="platform operator (the recorder's --store)",
            ) from None

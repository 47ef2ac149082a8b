"""Durable run history read from ADX (`portal.source: kusto`): the recorder's lifecycle rows.

The Portal asks the dashboard function the lifecycle KQL creates (`<table>DashboardRows()`,
the latest row per durable id, terminal states final) for the workspace's most recently
observed runs, over Kusto's REST query endpoint (`POST <endpoint>/v1/rest/query`). The
workspace and limit travel as declared query parameters, never spliced into the query text.

The answer is kept for `refresh` seconds, so the Runs board costs at most one query (and one
wait on ADX) per interval however many people look at it.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.request import Request, urlopen

from tau.errors import RuntimeFailure, UsageError
from tau.evidence import lifecycle

OWNER = "platform operator (portal.kusto)"
_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


def history_query(table: str) -> str:
    if not _TABLE.match(table):
        raise UsageError(
            f"--run-history-table {table[:80]!r} must be a Kusto table name (letters, digits, _)",
            owner="platform operator (portal.kusto.table)",
        )
    return (
        "declare query_parameters(tau_workspace:string, tau_limit:long);\n"
        f"{table}DashboardRows()\n"
        "| where workspace_id == tau_workspace\n"
        "| top tau_limit by observed_at desc"
    )


def _rows(data: Any) -> list[dict[str, Any]]:
    """Rows of the first table of a v1 REST answer, as column -> value (null as "")."""
    table = data["Tables"][0]
    names = [column["ColumnName"] for column in table["Columns"]]
    found = []
    for values in table["Rows"]:
        pairs = zip(names, values, strict=True)
        row = {name: "" if value is None else value for name, value in pairs}
        if isinstance(row.get("tags"), str):
            row["tags"] = json.loads(row["tags"] or "{}")
        found.append(row)
    return found


class KustoHistoryReader:
    """The workspace's latest lifecycle rows from ADX, re-queried at most every `refresh` s."""

    def __init__(
        self,
        endpoint: str,
        database: str,
        workspace: str,
        limit: int,
        *,
        table: str = lifecycle.TABLE,
        token: Callable[[], str],
        refresh: float = 15.0,
        timeout: float = 10.0,
    ) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.database, self.workspace, self.limit = database, workspace, limit
        self.query = history_query(table)
        self.token, self.refresh, self.timeout = token, refresh, timeout
        self.where = f"ADX {self.endpoint} database {database}"
        self._lock = threading.Lock()
        self._rows: list[dict[str, Any]] = []
        self._at: float | None = None

    def stamp(self) -> tuple[Any, ...]:
        return (int(time.monotonic() // self.refresh),)

    def read(self) -> list[dict[str, Any]]:
        with self._lock:
            now = time.monotonic()
            if self._at is None or now - self._at >= self.refresh:
                self._rows = self._query()
                self._at = now
            return self._rows

    def _query(self) -> list[dict[str, Any]]:
        body = json.dumps(
            {
                "db": self.database,
                "csl": self.query,
                # Parameter values are strings Kusto parses by the declared type.
                "properties": {
                    "Parameters": {"tau_workspace": self.workspace, "tau_limit": str(self.limit)}
                },
            }
        ).encode()
        request = Request(
            f"{self.endpoint}/v1/rest/query",
            data=body,
            method="POST",
            headers={
                "Authorization": f"Bearer {self.token()}",
                "Content-Type": "application/json; charset=utf-8",
                "Accept": "application/json",
            },
        )
        try:
            with urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read())
        except HTTPError as error:
            detail = error.read()[:200].decode("utf-8", "replace")
            raise RuntimeFailure(
                f"run history query to {self.where} answered HTTP {error.code}: {detail}",
                hint="check the Portal identity's Viewer role on the database and that the "
                "lifecycle schema exists",
                owner=OWNER,
            ) from None
        except (URLError, OSError, TimeoutError) as error:
            raise RuntimeFailure(
                f"run history query to {self.where} failed: {getattr(error, 'reason', error)}",
                hint="check the network path from the Portal to the ADX query endpoint",
                owner=OWNER,
            ) from None
        except ValueError:
            raise RuntimeFailure(
                f"run history query to {self.where} returned no JSON", owner=OWNER
            ) from None
        try:
            return _rows(data)
        except (KeyError, IndexError, TypeError, ValueError):
            raise RuntimeFailure(
                f"run history query to {self.where} returned no lifecycle table",
                hint="check that the lifecycle schema (its DashboardRows function) is deployed",
                owner=OWNER,
            ) from None

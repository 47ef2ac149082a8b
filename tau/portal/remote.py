"""Reading a workspace store from the researcher's machine: through that workspace's Portal.

The workspace store lives on the workspace PVC in the cluster; the researcher never mounts
or writes it. `taugrid-portal experiment --workspace W search|stellar|compare` asks the
Portal serving W (`taugrid-portal portal serve --workspace W --store ...`) over its Stellar
API, through the same port-forward the share-research guide uses
(`kubectl port-forward service/tau-portal 8080:80`), and prints exactly what the local
commands print: the Portal answers with the store functions' own documents.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from tau.errors import RuntimeFailure, UsageError

DEFAULT_PORTAL_URL = "http://127.0.0.1:8080"
TIMEOUT_SECONDS = 30.0
OWNER = "researcher: Portal port-forward"


@dataclass(frozen=True)
class PortalSource:
    url: str
    workspace: str

    def _get(self, path: str, params: list[tuple[str, Any]]) -> dict[str, Any]:
        pairs = [(k, str(v)) for k, v in params if v not in (None, "")]
        pairs.append(("workspace", self.workspace))
        address = f"{self.url.rstrip('/')}{path}?{urllib.parse.urlencode(pairs)}"
        try:
            with urllib.request.urlopen(address, timeout=TIMEOUT_SECONDS) as response:
                answer: dict[str, Any] = json.load(response)  # every endpoint answers an object
                return answer
        except urllib.error.HTTPError as error:
            reason = _reason(error)
            kind = UsageError if 400 <= error.code < 500 else RuntimeFailure
            raise kind(
                f"the Portal at {self.url} refused the request (HTTP {error.code}): {reason}",
                owner=OWNER if error.code == 400 else "platform operator (Portal)",
            ) from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            why = getattr(error, "reason", error)
            raise RuntimeFailure(
                f"cannot reach the Portal of workspace {self.workspace!r} at {self.url} ({why})",
                hint="start `kubectl port-forward service/tau-portal 8080:80` in the Portal's "
                "namespace, or pass --portal URL",
                owner=OWNER,
            ) from None

    def search(self, **flags: Any) -> dict[str, Any]:
        params: list[tuple[str, Any]] = [
            ("q", flags.get("query")),
            ("target", flags.get("target")),
            ("project", flags.get("project")),
            ("group", flags.get("group")),
            ("experiment", flags.get("experiment")),
            ("state", flags.get("state")),
            ("lifecycle", flags.get("lifecycle")),
            ("metric_name", flags.get("metric_name")),
            ("since", flags.get("since")),
            ("min_step", flags.get("min_step")),
            ("limit", flags.get("limit")),
        ]
        params += [("tag", t) for t in flags.get("tags", ())]
        params += [("metric_filter", f) for f in flags.get("metric_filters", ())]
        return self._get("/api/v2/stellar/search", params)

    def snapshot(self, target: str, metrics: list[str], max_points: int) -> dict[str, Any]:
        params: list[tuple[str, Any]] = [("target", target), ("max_points", max_points)]
        params += [("metric", m) for m in metrics]
        return self._get("/api/v2/stellar/snapshot", params)

    def compare(self, target: str, metrics: list[str], direction: str) -> list[dict[str, Any]]:
        params: list[tuple[str, Any]] = [("target", target), ("direction", direction)]
        params += [("metric", m) for m in metrics]
        rows: list[dict[str, Any]] = self._get("/api/v2/stellar/compare", params)["rows"]
        return rows


def _reason(error: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(error.read() or b"{}")
    except ValueError:
        body = {}
    reason = body.get("reason") if isinstance(body, dict) else None
    return str(reason or error.reason)[:300]

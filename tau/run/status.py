"""The status model both engines refrom tau.jsontypes import JSONObject
port in: ordered phases, each with a state and an owner.

A cluster run's phases come from a Kubernetes snapshot (`tau.lifecycle.phases`), a local
run's from its record (`tau.engine.status`); both are these `Phase` values, so one RunStatus
document (`apiVersion` `tau.azure.com/v1alpha1`) and one human layout serve both.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tau.jsontypes import JSONObject

PENDING, ACTIVE, DONE, WARNING, SKIPPED = "pending", "active", "done", "warning", "skipped"


@dataclass
class Phase:
    name: str
    status: str
    detail: str
    hint: str = ""
    owner: str = ""
    started_at: str = ""

    def to_dict(self) -> JSONObject:
        data = asdict(self)
        data["startedAt"] = data.pop("started_at")
        return {k: v for k, v in data.items() if v}

"""Pure rendering: a resolved `RunIntent` becomes the Kubernetes objects the platform expects.

Nothing here reads files, the clock or a cluster; the same intent always renders the same
objects, which is what makes golden tests and config hashes meaningful.
"""

from __future__ import annotations

from collections.abc import Mapping

from tau.jsontypes import JSONObject, JSONValue
from tau.render.errors import RenderError
from tau.render.intent import RunIntent
from tau.render.job import render_job
from tau.render.rayjob import render_rayjob
from tau.render.workflow import WorkflowIntent, redact_secret_provider_class, render_workflow

__all__ = ["RenderError", "RunIntent", "WorkflowIntent", "redact_secrets", "render"]


def render(intent: RunIntent | WorkflowIntent) -> list[JSONObject]:
    """Objects in creation order (a headless Service precedes a multi-node Job)."""
    if isinstance(intent, WorkflowIntent):
        return render_workflow(intent)
    if intent.engine == "rayjob":
        return render_rayjob(intent)
    return render_job(intent)


def redact_secrets(objects: list[JSONObject]) -> list[JSONObject]:
    """Client dry-run output: secretKeyRef names and keys become `<redacted>`.

    Which Secret feeds a workload is itself sensitive (it names credentials), so the
    printed manifest shows only that a secret reference exists. A literal env value under a
    secret-bearing name (`HF_TOKEN`) and any credential-shaped string are redacted too: a
    token pasted into the config must not come back on the terminal.
    """
    from tau import credentials
    from tau.render.meta import REDACTED

    def walk(node: JSONValue) -> JSONValue:
        if isinstance(node, dict):
            return walk_object(node)
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, str):
            return credentials.redact(node)
        return node

    def walk_object(node: Mapping[str, JSONValue]) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {}
        for key, value in node.items():
            if key == "secretKeyRef" and isinstance(value, dict):
                out[key] = {**value, "name": REDACTED, "key": REDACTED}
            else:
                out[key] = walk(value)
        name = out.get("name")
        if isinstance(name, str) and "value" in out and credentials.is_secret_name(name):
            out["value"] = REDACTED
        return out

    return [
        redact_secret_provider_class(obj)
        if obj.get("kind") == "SecretProviderClass"
        else walk_object(obj)
        for obj in objects
    ]

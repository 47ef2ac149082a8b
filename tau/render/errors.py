"""The one error type rendering raises.

Rendering is the last offline gate before Kueue sees an object, so every refusal is a
`ValidationError` (exit 2) that names the field and who can fix it; callers (and the
property tests) rely on nothing else escaping a render function.
"""

from __future__ import annotations

from tau.errors import ValidationError

RESEARCHER = "researcher: tau.yaml"
PLATFORM = "platform team: workload profile"


class RenderError(ValidationError):
    """A resolved intent that cannot become a valid Kubernetes object."""

    def __init__(self, message: str, *, owner: str = RESEARCHER, hint: str = "") -> None:
        super().__init__(message, hint=hint, owner=owner)

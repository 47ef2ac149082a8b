"""Image reference rules: digest pinning for staged content, tag pinning for the offload sidecar."""

from __future__ import annotations

import re

_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_HOST = rf"(?:\[[0-9a-f:]+\]|{_LABEL}(?:\.{_LABEL})*)(?::[0-9]+)?"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_PINNED = re.compile(
    rf"^(?P<host>{_HOST})/(?P<path>{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::[a-z0-9_][a-z0-9_.-]{0,127})?@sha256:[a-f0-9]{64}$"
)
_DIGEST = re.compile(r"@sha256:[a-f0-9]{64}$")


def is_digest_pinned(reference: str) -> bool:
    """A complete, normalised, lowercase OCI reference pinned by a sha256 digest.

    The registry must be explicit (a dotted host, a port, `localhost` or an IPv6 literal),
    because an implicit Docker Hub reference does not name where the bytes come from.
    """
    match = _PINNED.match(reference)
    if match is None:
        return False
    host = match.group("host")
    explicit = host.startswith("[") or "." in host or ":" in host or host == "localhost"
    if not explicit:
        return False
    # docker.io/<name> normalises to docker.io/library/<name>: not its own string form.
    return not (host == "docker.io" and "/" not in match.group("path"))


def pin_problem(field: str) -> str:
    return (
        f"{field} must be a complete lowercase OCI image reference pinned by an "
        "@sha256:<64 lowercase hex> digest"
    )


def offload_image_problem(reference: str) -> str | None:
    """Why a metrics offload image is not acceptable, or None."""
    if not reference or any(c.isspace() for c in reference):
        return f"metrics offload image {reference!r} must be non-empty without whitespace"
    if "@sha256:" in reference:
        return (
            None
            if _DIGEST.search(reference)
            else (f"metrics offload image {reference!r} has a malformed @sha256 digest")
        )
    last = reference.rsplit("/", 1)[-1]
    if ":" not in last:
        return (
            f"metrics offload image {reference!r} must include an explicit non-latest tag "
            "or @sha256 digest"
        )
    if last.rsplit(":", 1)[1].lower() == "latest":
        return "metrics offload image must not use the unpinned :latest tag"
    return None

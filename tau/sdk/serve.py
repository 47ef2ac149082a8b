"""`tau.serve(...)`: a serving deployment declared next to the training code.

A serve handle is not a managed workflow: deploying it is explicit (`.deploy()`), and it
runs `tau serve deploy NAME --kind ... --profile ...` with the declared flags. `tau python
build` lists serve handles separately for the same reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tau.errors import UsageError

KINDS = ("rayservice", "deployment")
SOURCES = ("from_finetune", "checkpoint_ref", "from_model", "model_ref", "checkpoint")
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


@dataclass(frozen=True)
class ServeHandle:
    name: str
    profile: str
    kind: str = "rayservice"
    image: str | None = None
    replicas: int | None = None
    import_path: str | None = None
    namespace: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    source: tuple[str, str] | None = None  # (flag name, value)

    def command(self, *, dry_run: str = "", context: str = "") -> list[str]:
        argv = ["serve", "deploy", self.name, "--kind", self.kind, "--profile", self.profile]
        for flag, value in (
            ("--image", self.image),
            ("--replicas", None if self.replicas is None else str(self.replicas)),
            ("--import-path", self.import_path),
            ("-n", self.namespace),
            ("--context", context or None),
        ):
            if value:
                argv += [flag, value]
        for key, value in sorted(self.env.items()):
            argv += ["--env", f"{key}={value}"]
        if self.source:
            argv += [f"--{self.source[0].replace('_', '-')}", self.source[1]]
        if dry_run:
            argv.append(f"--dry-run={dry_run}")
        return argv

    def deploy(self, *, dry_run: str = "", context: str = "") -> int:
        from tau.sdk.delegate import run_tau

        return run_tau(self.command(dry_run=dry_run, context=context))


def serve(
    name: str,
    *,
    profile: str,
    kind: str = "rayservice",
    image: str | None = None,
    replicas: int | None = None,
    import_path: str | None = None,
    namespace: str | None = None,
    env: dict[str, str] | None = None,
    **sources: str,
) -> ServeHandle:
    if not NAME.match(name or ""):
        raise UsageError(f"tau.serve: name={name!r} must be a DNS label")
    if not profile:
        raise UsageError("tau.serve: profile is required (e.g. model-serve)")
    if kind not in KINDS:
        raise UsageError(f"tau.serve: kind must be one of: {', '.join(KINDS)}")
    unknown = sorted(set(sources) - set(SOURCES))
    if unknown:
        raise UsageError(f"tau.serve: unknown option {', '.join(unknown)}")
    given = [(key, value) for key, value in sources.items() if value]
    if len(given) > 1:
        raise UsageError(
            f"tau.serve: at most one of {', '.join(SOURCES)} (got {', '.join(k for k, _ in given)})"
        )
    return ServeHandle(
        name, profile, kind, image, replicas, import_path, namespace, dict(env or {}),
        given[0] if given else None,
    )  # fmt: skip

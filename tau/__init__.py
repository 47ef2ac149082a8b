"""TauGrid: repository-first AI workloads on Kubernetes.

The Python SDK is re-exported here (`@tau.train`, `@tau.eval`, `tau.serve`, `tau.Ctx`, ...)
and imported on first use, so `import tau` stays light for the CLI.
"""

from typing import Any

from tau.version import __version__ as __version__

_SDK = (
    "Ctx",
    "PvcMount",
    "SecretRef",
    "ServeHandle",
    "eval",
    "pvc_mount",
    "secret_ref",
    "serve",
    "train",
)


def __getattr__(name: str) -> Any:
    if name in _SDK:
        import tau.sdk

        return getattr(tau.sdk, name)
    raise AttributeError(f"module 'tau' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_SDK])

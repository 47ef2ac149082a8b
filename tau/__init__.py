"""TauGrid: repository-first AI workloads on Kubernetes.

The Python SDK is re-exported here (`@tau.train`, `@tau.eval`, `tau.serve`, `tau.Ctx`, ...)
and imported on first use, so `import tau` stays light for the CLI.
"""

from typing import Any

# The one version of the distribution: the tau CLI and wheel, the chart (charts/taugrid
# Chart.yaml version and appVersion, and its first-party sub-charts; tests keep them equal), the
# image tags the chart pulls by default, `tau cluster install --version` and Pulumi's
# taugrid_version default.
__version__ = "0.3.2"

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

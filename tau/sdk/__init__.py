"""The TauGrid Python SDK: `@tau.train`, `@tau.eval`, `tau.serve(...)` and `Ctx`.

Decorated functions describe managed workflows (`schema_version: 1` manifests with staged
train → eval lineage). The SDK generates those manifests and hands them to `tau run
--config`; it never renders Kubernetes objects itself. Everything here is re-exported from
`tau` (`import tau; @tau.train(...)`).
"""

from tau.sdk.ctx import Ctx
from tau.sdk.handles import Handle, PvcMount, SecretRef, eval, pvc_mount, secret_ref, train
from tau.sdk.serve import ServeHandle, serve

__all__ = [
    "Ctx",
    "Handle",
    "PvcMount",
    "SecretRef",
    "ServeHandle",
    "eval",
    "pvc_mount",
    "secret_ref",
    "serve",
    "train",
]

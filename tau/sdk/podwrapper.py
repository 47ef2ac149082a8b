"""The trainer a managed workflow runs in the pod: `/script/train.py` of an SDK build.

`tau python build` ships this file (with `HANDLE` set to the decorated attribute), the
user's module as `tau_user_module.py`, and `tau_keys.py` / `tau_ctx.py` (copies of
`tau/keys.py` and `tau/sdk/ctx.py`). The workload image need not have TauGrid installed:
when `import tau` fails, a small stand-in package is assembled from those copies whose
decorators only record the decorated functions.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

HANDLE = ""
HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class _Recorded:
    """What a decorator leaves behind in the pod: the function and its options."""

    def __init__(self, kind: str, options: dict[str, Any], fn: Callable[..., Any]) -> None:
        self.kind, self.options, self.fn = kind, options, fn


def _decorator(kind: str) -> Callable[..., Callable[[Callable[..., Any]], _Recorded]]:
    def factory(**options: Any) -> Callable[[Callable[..., Any]], _Recorded]:
        return lambda fn: _Recorded(kind, options, fn)

    return factory


def _stand_in() -> None:
    package = types.ModuleType("tau")
    package.__path__ = []
    sys.modules["tau"] = package
    # Attributes of a module built at run time: set through its namespace.
    package.__dict__["keys"] = _load("tau.keys", HERE / "tau_keys.py")
    sdk = types.ModuleType("tau.sdk")
    sdk.__path__ = []
    sys.modules["tau.sdk"] = sdk
    package.__dict__["sdk"] = sdk
    ctx = _load("tau.sdk.ctx", HERE / "tau_ctx.py")
    package.__dict__.update(
        Ctx=ctx.Ctx,
        train=_decorator("train"),
        eval=_decorator("eval"),
        serve=lambda **options: None,
        pvc_mount=lambda name, **options: {"name": name, **options},
        secret_ref=lambda name, key: {"name": name, "key": key},
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--manifest", required=True)
    parser.add_argument("--smoke-pairs", type=int, default=0)
    args = parser.parse_args()
    try:
        import tau.sdk.ctx  # noqa: F401  (TauGrid installed in the image)
    except ImportError:
        _stand_in()
    import yaml

    from tau.sdk.ctx import Ctx

    manifest = yaml.safe_load(Path(args.manifest).read_text())
    module = _load("tau_user_module", HERE / "tau_user_module.py")
    handle = getattr(module, HANDLE)
    ctx = Ctx.from_environment(manifest)
    handle.fn(ctx)
    ctx.finish()


if __name__ == "__main__":
    main()

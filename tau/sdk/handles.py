"""`@tau.train` / `@tau.eval`: a function becomes a handle that runs locally or in the cluster.

Calling the handle runs the function here with a local `Ctx`. `.manifest()` is the managed
workflow manifest (`schema_version: 1`) the decorator's options describe; `tau python build`
writes it beside a generated trainer, and `tau run --config` renders and submits it. An
eval declares its train run with `after=`, which is how staged train → eval lineage finds
the upstream checkpoint.
"""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau.errors import UsageError
from tau.sdk.ctx import Ctx

NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
WRAPPER = "train.py"
USER_MODULE = "tau_user_module.py"
SUPPORT = ("tau_keys.py", "tau_ctx.py")
RESERVED_DESTINATIONS = (WRAPPER, USER_MODULE, *SUPPORT)
RESERVED_MANIFEST_KEYS = ("schema_version", "name", "compute", "eval", "run")
KINDS = ("job", "rayjob")
SIZING = {
    "cpu_request": "cpus",
    "cpu_limit": "cpu_limit",
    "memory_request": "memory",
    "memory_limit": "memory_limit",
    "worker_cpu_request": "worker_cpus",
    "worker_cpu_limit": "worker_cpu_limit",
    "worker_memory_request": "worker_memory",
    "worker_memory_limit": "worker_memory_limit",
}


@dataclass(frozen=True)
class SecretRef:
    """An existing Kubernetes Secret key, for `env=` values (never a secret value)."""

    name: str
    key: str


def secret_ref(name: str, key: str) -> SecretRef:
    if not name or not key:
        raise UsageError("tau.secret_ref(name, key): both are required")
    return SecretRef(name, key)


@dataclass(frozen=True)
class PvcMount:
    name: str
    pvc: str
    mount_path: str
    read_only: bool = False


def pvc_mount(name: str, *, pvc: str, mount_path: str, read_only: bool = False) -> PvcMount:
    return PvcMount(name, pvc, mount_path, read_only)


@dataclass
class Options:
    """The decorator's keyword options (validated when the decorator runs)."""

    name: str
    kind: str  # train | eval
    gpus: int = 1
    workers: int = 1
    cpu_workers: int = 1
    after: str | None = None
    workload_kind: str = "rayjob"
    image: str | None = None
    pip: tuple[str, ...] = ()
    env: dict[str, str | SecretRef] = field(default_factory=dict)
    env_kv: dict[str, str] = field(default_factory=dict)
    namespace: str | None = None
    queue: str | None = None
    team: str | None = None
    lane: str | None = None
    gpu_class: str | None = None
    node_selector: dict[str, str] = field(default_factory=dict)
    data_pvc: str | None = None
    mounts: tuple[PvcMount, ...] = ()
    sizing: dict[str, str] = field(default_factory=dict)
    checkpoint_artifact: str = "last.safetensors"
    model: str | None = None
    base_model: str | None = None
    task: str | None = None
    tags: dict[str, str] = field(default_factory=dict)
    primary_metric: str | None = None
    metric_direction: str | None = None
    experiment: str | None = None
    smoke_pairs: int | None = None
    extra_scripts: tuple[str, ...] = ()
    extra_manifest: dict[str, Any] = field(default_factory=dict)


def _fail(options: Options | None, message: str) -> UsageError:
    where = f"@tau.{options.kind}({options.name!r})" if options else "@tau.train"
    return UsageError(f"{where}: {message}")


def _options(kind: str, raw: dict[str, Any]) -> Options:
    name = raw.pop("name", None)
    if not isinstance(name, str) or not NAME.match(name) or len(name) > 40:
        raise UsageError(
            f"@tau.{kind}: name={name!r} must be a DNS label of at most 40 characters (lowercase "
            "letters, digits, '-')"
        )
    options = Options(name=name, kind=kind)
    sizing = {key: str(raw.pop(key)) for key in list(raw) if key in SIZING}
    options.sizing = {SIZING[key]: value for key, value in sizing.items()}
    if "runtime_pip" in raw:
        raw.setdefault("pip", raw.pop("runtime_pip"))
    allowed = {f for f in Options.__dataclass_fields__ if f not in ("name", "kind", "sizing")}
    if kind == "train":
        allowed -= {"after", "cpu_workers"}
    else:
        allowed -= {"workers", "workload_kind"}
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise _fail(
            options, f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
        )
    for key, value in raw.items():
        setattr(options, key, value)
    _check(options)
    return options


def _check(o: Options) -> None:
    for key in ("gpus", "workers", "cpu_workers"):
        value = getattr(o, key)
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(o, f"{key} must be an integer")
    if not 0 <= o.gpus <= 8:
        raise _fail(o, f"gpus must be between 0 and 8 (got {o.gpus})")
    if o.kind == "eval" and o.gpus < 1:
        raise _fail(o, "gpus must be >= 1 for an eval (it runs one GPU worker)")
    if o.workers < 1 or o.cpu_workers < 1:
        raise _fail(o, "workers and cpu_workers must be >= 1")
    if o.kind == "train" and o.workload_kind not in KINDS:
        raise _fail(o, f"workload_kind must be one of: {', '.join(KINDS)}")
    if o.kind == "train" and o.lane == "eval":
        raise _fail(o, "lane='eval' is for evals; use @tau.eval")
    if o.after is not None and (not isinstance(o.after, str) or not NAME.match(o.after)):
        raise _fail(o, f"after={o.after!r} must name a @tau.train run")
    if isinstance(o.pip, str) or not all(
        isinstance(p, str) and p.strip() == p and p for p in o.pip
    ):
        raise _fail(o, "pip must be a list of package specifiers")
    o.pip = tuple(o.pip)
    for key, value in o.env.items():
        if not isinstance(value, str | SecretRef):
            raise _fail(o, f"env[{key!r}] must be a string or tau.secret_ref(...)")
    o.node_selector = _selector(o, o.node_selector)
    o.mounts = tuple(o.mounts)
    if not all(isinstance(m, PvcMount) for m in o.mounts):
        raise _fail(o, "mounts take tau.pvc_mount(name, pvc=..., mount_path=...) values")
    o.extra_scripts = tuple(o.extra_scripts)
    for entry in o.extra_scripts:
        dest = entry.rpartition(":")[2] if ":" in entry else Path(entry).name
        if dest in RESERVED_DESTINATIONS:
            raise _fail(o, f"extra_scripts {entry!r}: {dest} is reserved by the SDK build")
    reserved = sorted(set(o.extra_manifest) & set(RESERVED_MANIFEST_KEYS))
    if reserved:
        raise _fail(o, f"extra_manifest cannot override {', '.join(reserved)}")
    if o.metric_direction not in (None, "lower", "higher"):
        raise _fail(o, "metric_direction must be 'lower' or 'higher'")


def _selector(o: Options, value: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    if isinstance(value, Mapping):
        pairs = list(value.items())
    else:
        pairs = []
        for item in value:
            key, sep, val = str(item).partition("=")
            if not sep:
                raise _fail(o, f"node_selector {item!r} must be key=value")
            pairs.append((key.strip(), val.strip()))
    for key, val in pairs:
        if not key or not val:
            raise _fail(o, "node_selector keys and values must be non-empty")
    return dict(pairs)


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class Handle:
    """A decorated function: call it locally, or build its manifest for the cluster."""

    def __init__(self, fn: Callable[..., Any], options: Options) -> None:
        self.fn = fn
        self.options = options
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = getattr(fn, "__name__", options.name)

    @property
    def name(self) -> str:
        return self.options.name

    @property
    def kind(self) -> str:
        return self.options.kind

    def local_ctx(self, root: Path | None = None, **values: Any) -> Ctx:
        return Ctx(
            name=self.name,
            gpus=self.options.gpus,
            workers=self.options.workers,
            manifest=self.manifest(),
            output_dir=(root or Path(".tau") / "runs") / self.name,
            **values,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ctx = self.local_ctx()
        result = self.fn(ctx, *args, **kwargs)
        ctx.finish()
        return result

    def manifest(self) -> dict[str, Any]:
        """The managed workflow manifest (`schema_version: 1`) for the cluster."""
        o = self.options
        compute: dict[str, Any] = {"gpus": o.gpus}
        if o.kind == "train":
            compute["workers"] = o.workers
        compute.update(o.sizing)
        runtime: dict[str, Any] = {"pip": list(o.pip)}
        if o.image:
            runtime["image"] = o.image
        if o.env:
            runtime["env"] = [_env_entry(k, v) for k, v in sorted(o.env.items())]
        if o.env_kv:
            runtime["env_kv"] = dict(sorted(o.env_kv.items()))
        data: dict[str, Any] = {"schema_version": 1, "name": o.name, "compute": compute}
        if o.kind == "eval":
            evaluation: dict[str, Any] = {"cpu_workers": o.cpu_workers}
            if o.after:
                evaluation["upstream"] = o.after
            data["eval"] = evaluation
        data["runtime"] = runtime
        storage: dict[str, Any] = {}
        if o.data_pvc:
            storage["data_pvc"] = o.data_pvc
        if o.mounts:
            storage["mounts"] = [
                {"name": m.name, "mountPath": m.mount_path, "pvc": m.pvc, "readOnly": m.read_only}
                for m in o.mounts
            ]
        if storage:
            data["storage"] = storage
        data["artifacts"] = {"checkpoint": o.checkpoint_artifact}
        if o.experiment:
            data["research"] = {"experiment": o.experiment}
        model = {
            key: value
            for key, value in (
                ("name", o.model),
                ("base", o.base_model),
                ("task", o.task),
                ("tags", dict(sorted(o.tags.items())) or None),
                ("primary_metric", o.primary_metric),
                ("metric_direction", o.metric_direction),
            )
            if value
        }
        if model:
            data["model"] = model
        run: dict[str, Any] = {"entrypoint": WRAPPER}
        run["workload_kind"] = o.workload_kind if o.kind == "train" else "rayjob-eval"
        if o.smoke_pairs is not None:
            run["smoke_pairs"] = o.smoke_pairs
        data["run"] = run
        data["workflow"] = {"extra_scripts": [USER_MODULE, *SUPPORT, *o.extra_scripts]}
        policy = {
            key: value
            for key, value in (
                ("namespace", o.namespace),
                ("queue", o.queue),
                ("team", o.team),
                ("lane", o.lane),
                ("gpu_class", o.gpu_class),
                ("node_selector", o.node_selector or None),
            )
            if value
        }
        if policy:
            data["policy"] = policy
        return _merge(data, o.extra_manifest)


class EvalHandle(Handle):
    """Locally the ctx parameter is implied and `upstream_checkpoint=` is keyword-only."""

    def __call__(
        self, *args: Any, upstream_checkpoint: str | Path | None = None, **kwargs: Any
    ) -> Any:
        ctx = self.local_ctx(
            upstream_checkpoint=Path(upstream_checkpoint) if upstream_checkpoint else None
        )
        result = self.fn(ctx, *args, **kwargs)
        ctx.finish()
        return result


def _env_entry(name: str, value: str | SecretRef) -> dict[str, Any]:
    if isinstance(value, SecretRef):
        return {"name": name, "valueFrom": {"secretKeyRef": {"name": value.name, "key": value.key}}}
    return {"name": name, "value": value}


def _decorate(kind: str, options: dict[str, Any]) -> Callable[[Callable[..., Any]], Handle]:
    parsed = _options(kind, dict(options))

    def wrap(fn: Callable[..., Any]) -> Handle:
        if not callable(fn):
            raise _fail(parsed, "decorates a function")
        params = list(inspect.signature(fn).parameters)
        if not params:
            raise _fail(parsed, f"{fn.__name__} must take the Ctx as its first parameter")
        if kind == "eval" and "upstream_checkpoint" in params:
            raise _fail(parsed, "upstream_checkpoint is the SDK's keyword; rename the parameter")
        return (EvalHandle if kind == "eval" else Handle)(fn, parsed)

    return wrap


def train(**options: Any) -> Callable[[Callable[..., Any]], Handle]:
    """Declare a training run. `name` is required; see docs/sdk.md for every option."""
    return _decorate("train", options)


def eval(**options: Any) -> Callable[[Callable[..., Any]], Handle]:
    """Declare an evaluation (one GPU worker plus `cpu_workers`), optionally `after=` a train."""
    return _decorate("eval", options)

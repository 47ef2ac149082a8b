"""From a validated run config to the exact local process: argv, env, working dir, checks.

The env comes from the renderer's own builders (`tau.render.job.managed_env`,
`tau.render.rayjob.ray_env`, `tau.render.env.container_env`) applied to the same resolved
intent, then pod paths are mapped onto this machine. Nothing here starts a process; every
refusal (GPUs, missing packages, image-only features) happens before anything runs.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tau import keys
from tau.engine.gpus import GpuInventory
from tau.engine.layout import PathMap
from tau.errors import RuntimeFailure, UsageError
from tau.render import command as cmd
from tau.render import tune_driver, wrapper
from tau.render.env import STAGING_ROOT, container_env
from tau.render.intent import Mount, RunIntent
from tau.resolve.storage import DEFAULT_OUTPUT_ROOT
from tau.run.failures import RetryPolicy, policy_from
from tau.runconfig.models import DEFAULT_CHECKPOINT_ROOT

if TYPE_CHECKING:
    from tau.runconfig.loader import LoadedConfig

RESEARCHER = "researcher: tau.yaml"
# Cluster-network settings of the Ray pods that mean nothing (or harm) on one machine.
POD_ONLY_ENV = (keys.ENV_NCCL_SOCKET_IFNAME, keys.ENV_HF_HOME)


@dataclass
class LocalPlan:
    name: str
    intent: RunIntent
    kind: str
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    paths: PathMap
    output_dir: Path
    staging_dir: Path | None
    script_dir: Path
    policy: RetryPolicy | None
    checkpoint: str
    gpus_needed: int
    gpus: GpuInventory
    metrics_history: list[Path]
    notes: list[str] = field(default_factory=list)
    ray_resources: dict[str, int] | None = None
    script_files: dict[str, bytes] = field(default_factory=dict)


def local_intent(intent: RunIntent) -> RunIntent:
    """Locally `/data` always exists (the data root), so the PVC-backed defaults apply."""
    if not intent.data_mounted:
        intent = replace(intent, mounts=(*intent.mounts, Mount("data", "/data")))
    if not intent.output:
        intent = replace(intent, output=f"{DEFAULT_OUTPUT_ROOT}/{intent.name}")
    return intent


def build_plan(
    intent: RunIntent,
    *,
    loaded: LoadedConfig,
    run_dir: Path,
    data_root: Path,
    store: Path,
    gpus: GpuInventory,
    publication_id: str,
) -> LocalPlan:
    intent = local_intent(intent)
    notes: list[str] = []
    _refuse_cluster_only(intent)
    needed = intent.gpus if intent.engine == "job" else intent.workers * intent.gpus_per_worker
    if needed > gpus.count:
        field_name = (
            "compute.gpus" if intent.engine == "job" else "compute.workers x gpus_per_worker"
        )
        raise RuntimeFailure(
            f"{getattr(loaded, 'path', intent.name)} needs {needed} GPU(s) ({field_name}) but "
            f"this machine has {gpus.count} ({gpus.detail}); short by {needed - gpus.count}",
            hint="run it on the cluster (tau run without --local) or lower the GPU count",
            owner=RESEARCHER,
        )
    _check_packages(intent)
    if intent.image:
        notes.append(
            f"runtime.image {intent.image} is not used locally (no container runtime): "
            f"running in this Python environment ({sys.executable})"
        )
    if intent.metrics_offload is not None:
        notes.append(
            "metrics.offload is not used locally: the engine imports metrics into the local "
            "store itself"
        )
    if intent.staged_publish:
        intent = replace(intent, publication_id=intent.publication_id or publication_id)
    script_dir = run_dir / "script"
    paths = PathMap(data_root=data_root, hot_dir=run_dir / "mnt", script_dir=script_dir)
    env = _environment(intent, paths, store)
    output_dir = Path(paths.local(intent.output or ""))
    staging = Path(paths.local(f"{STAGING_ROOT}/{intent.name}")) if intent.staged_publish else None
    argv, files, ray_resources = _command(intent, script_dir, gpus_needed=needed)
    if intent.profiler is not None:
        _check_profiler_tool(intent.profiler.mode, env)
        argv = wrapper.profiled(intent, argv)
        notes.append(
            f"profiler: rank {intent.profiler.rank} runs under {intent.profiler.mode}; reports "
            f"in {env[keys.ENV_PROFILE_OUT_DIR]}"
        )
    cwd = _working_dir(intent, paths)
    history = [
        Path(paths.local(h)) if h.startswith("/") else output_dir / h
        for h in _metrics_history(loaded)
    ]
    return LocalPlan(
        name=intent.name,
        intent=intent,
        kind="RayJob" if intent.engine == "rayjob" else "Job",
        argv=argv,
        env=env,
        cwd=cwd,
        paths=paths,
        output_dir=output_dir,
        staging_dir=staging,
        script_dir=script_dir,
        policy=policy_from(loaded.config, intent.name),
        checkpoint=_checkpoint(loaded, intent.name),
        gpus_needed=needed,
        gpus=gpus,
        metrics_history=history,
        notes=notes,
        ray_resources=ray_resources,
        script_files=files,
    )


def _refuse_cluster_only(intent: RunIntent) -> None:
    if intent.source is not None:
        raise UsageError(
            f"run.source ships the code inside image {intent.source.image}, which the local "
            "engine cannot run without a container runtime",
            hint="use run.entrypoint for local runs, or run on the cluster",
            owner=RESEARCHER,
        )
    if intent.script is None:
        raise UsageError(
            "the local engine needs run.entrypoint: an image's own command cannot run without "
            "a container runtime",
            hint="set entrypoint in tau.yaml",
            owner=RESEARCHER,
        )
    if intent.image_assets:
        names = ", ".join(a.name for a in intent.image_assets)
        raise UsageError(
            f"storage.image_assets ({names}) are copied out of images, which the local engine "
            "cannot do without a container runtime",
            hint="remove storage.image_assets for local runs, or run on the cluster",
            owner=RESEARCHER,
        )
    if intent.multi_node:
        raise UsageError(
            f"execution.nodes is {intent.nodes}; the local engine runs one node",
            hint="set execution.nodes: 1 to try it locally, or run on the cluster",
            owner=RESEARCHER,
        )


def _check_profiler_tool(tool: str, env: dict[str, str]) -> None:
    """The same profiler stage runs locally; refuse once, before starting, without its tool."""
    if shutil.which(tool, path=env.get("PATH")) is None:
        raise RuntimeFailure(
            f"profiler.mode {tool} runs the entrypoint under {tool}, which is not on PATH on "
            "this machine",
            hint=f"install {tool} (NVIDIA Nsight) here, or remove profiler for local runs",
            owner="researcher: local machine",
        )


def _check_packages(intent: RunIntent) -> None:
    needs: list[tuple[str, str]] = []
    if intent.launcher == "torchrun":
        needs.append(("torch", "execution.launcher: torchrun runs torch.distributed.run"))
    if intent.engine == "rayjob":
        needs.append(("ray", "engine: rayjob runs the driver on a local Ray runtime"))
        if intent.launcher == "ray-tune":
            needs.append(
                ("torch", "the ray-tune driver wraps the loop in Ray Train's TorchTrainer")
            )
    missing = [req for req in intent.pip if not _installed(req)]
    if missing:
        raise RuntimeFailure(
            "runtime.pip lists packages missing from this Python environment: "
            f"{', '.join(missing)} (the local engine checks runtime.pip instead of installing)",
            hint="pip install " + " ".join(shlex.quote(m) for m in missing),
            owner="researcher: local Python environment",
        )
    for module, why in needs:
        if importlib.util.find_spec(module) is None:
            extra = "ray[tune]" if module == "ray" else module
            raise RuntimeFailure(
                f"{why}, but {module!r} is not installed in {sys.executable}",
                hint=f"install it into this environment: pip install '{extra}'",
                owner="researcher: local Python environment",
            )


def _installed(requirement: str) -> bool:
    name = re.split(r"[\s<>=!~;\[@]", requirement.strip(), maxsplit=1)[0]
    if not name:
        return True
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _environment(intent: RunIntent, paths: PathMap, store: Path) -> dict[str, str]:
    if intent.engine == "rayjob":
        from tau.render.rayjob import ray_env

        managed = ray_env(intent)
        for name in POD_ONLY_ENV:
            managed.pop(name, None)
        if intent.staged_publish:
            managed[keys.ENV_OUTPUT_STAGING_DIR] = f"{STAGING_ROOT}/{intent.name}"
    else:
        from tau.render.job import managed_env

        managed = managed_env(intent)
    entries = container_env(intent, managed)
    contract: dict[str, str] = {}
    missing_secrets = []
    for entry in entries:
        name = str(entry["name"])
        if "value" in entry:
            contract[name] = paths.local(str(entry["value"]))
        elif os.environ.get(name):
            contract[name] = os.environ[name]
        else:
            missing_secrets.append(name)
    if missing_secrets:
        raise UsageError(
            f"runtime.env_secret {', '.join(missing_secrets)} comes from a Kubernetes Secret; "
            "locally it must be set in your environment",
            hint=f"export {missing_secrets[0]}=... before tau run --local",
            owner=RESEARCHER,
        )
    base = {k: v for k, v in os.environ.items() if k not in keys.USER_SETTABLE_TAU_ENV}
    evidence = {
        keys.ENV_EXP_STORE: str(store),
        keys.ENV_RUN_NAME: intent.name,
        keys.ENV_STELLAR_DIR: str(paths.hot_dir.parent / "stellar"),
        "PYTHONUNBUFFERED": "1",
    }
    experiment = intent.experiment
    for name, value in (
        (keys.ENV_PROJECT, experiment.project),
        (keys.ENV_EXPERIMENT_ID, experiment.experiment_id),
        (keys.ENV_GROUP, experiment.group),
    ):
        if value:
            evidence[name] = value
    return base | evidence | contract


def _command(
    intent: RunIntent, script_dir: Path, *, gpus_needed: int
) -> tuple[list[str], dict[str, bytes], dict[str, int] | None]:
    assert intent.script is not None
    script = intent.script
    files = {script.name: script.content}
    flags = shlex.split(cmd.config_flags(intent.configs))
    target = str(script_dir / script.name)
    if intent.engine == "rayjob":
        if intent.launcher == "ray-tune":
            files[tune_driver.FILENAME] = tune_driver.SOURCE.encode()
            target = str(script_dir / tune_driver.FILENAME)
        cpus = max(os.cpu_count() or 1, intent.workers + 1)
        return [sys.executable, target], files, {"num_cpus": cpus, "num_gpus": gpus_needed}
    shape = cmd.job_command(intent)  # the cluster's validation of launcher vs. script
    assert shape is not None
    if intent.launcher == "torchrun":
        prefix = shlex.split(cmd.torchrun_prefix(intent))
        return [sys.executable, *prefix[1:], target, *flags], files, None
    if f"python3 {cmd.PY_TARGET}" in shape[-1]:
        return [sys.executable, target, *flags], files, None
    shebang = script.content.split(b"\n", 1)[0][2:].decode(errors="replace").strip()
    return [*shlex.split(shebang), target, *flags], files, None


def _working_dir(intent: RunIntent, paths: PathMap) -> Path:
    if intent.working_dir:
        if not paths.maps(intent.working_dir):
            raise UsageError(
                f"runtime.working_dir {intent.working_dir!r} is outside /data; the local "
                "engine maps only /data (--data-root) and /mnt",
                owner=RESEARCHER,
            )
        return Path(paths.local(intent.working_dir))
    return paths.data_root


def _metrics_history(loaded: object) -> list[str]:
    metrics = getattr(getattr(loaded, "config", None), "metrics", None)
    return list(getattr(metrics, "history", None) or [])


def _checkpoint(loaded: object, name: str) -> str:
    """Where TAU_RESUME_FROM points (pod path), also when retries are off (manual resume)."""
    block = getattr(getattr(loaded, "config", None), "resilience", None)
    return getattr(block, "checkpoint_path", None) or f"{DEFAULT_CHECKPOINT_ROOT}/{name}"

"""`tau run TARGET --local`: resolve, refuse early, record, then supervise to the end."""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tau import keys
from tau.engine import gpus as gpu_inventory
from tau.engine import procgroup, records
from tau.engine.layout import ENV_STATE_DIR, default_data_root, default_store, state_root
from tau.engine.plan import LocalPlan, build_plan
from tau.engine.records import LocalRun
from tau.engine.supervise import Supervisor
from tau.errors import UsageError
from tau.resolve.direct import Resolution

if TYPE_CHECKING:
    from tau.runconfig.loader import LoadedConfig

Echo = Callable[[str], None]
# The run path's planner for a resumed run, called once the engine has checked it may resume.
Resolve = Callable[[str], Resolution]


class NameTaken(Exception):
    """Another `tau run` claimed the planned run name between planning and start."""


def start(
    loaded: LoadedConfig,
    resolution: Resolution,
    *,
    data_root: Path | None = None,
    store: Path | None = None,
    argv: tuple[str, ...] = (),
    echo: Echo,
    stream: Echo | None,
) -> LocalRun:
    """Run the planned `resolution` of `loaded` locally to completion, under the name the
    plan chose (`records.free_name`); the record is written before the process starts."""
    _check_directories(
        ("--data-root" if data_root else "the local data root", data_root or default_data_root()),
        ("the experiment store ($TAU_EXP_STORE)", store or default_store()),
        (f"the local run state (${ENV_STATE_DIR})", state_root()),
    )
    name = resolution.intent.name
    if not records.claim(name):
        raise NameTaken(name)
    try:
        plan = _plan(loaded, name, resolution, data_root, store, echo)
    except BaseException:
        shutil.rmtree(records.run_dir(name), ignore_errors=True)
        raise
    run = new_record(loaded, plan, argv)
    records.save(run)
    write_scripts(plan)
    echo(f"local run {name} started ({run.kind}, {plan.gpus_needed} GPU(s))")
    return Supervisor(run, plan, echo=echo, stream=stream).supervise(dict(plan.env))


def _check_directories(*places: tuple[str, Path]) -> None:
    """Refuse before a record exists when a directory tau must create is blocked by a file."""
    for label, path in places:
        blocked = next((p for p in (path, *path.parents) if p.exists()), None)
        if blocked is not None and not blocked.is_dir():
            raise UsageError(
                f"{label} {path} cannot be a directory: {blocked} is a file",
                hint="point it at a directory",
            )


def resume(
    name: str,
    loaded: LoadedConfig,
    resolve: Resolve,
    *,
    checkpoint: str = "",
    force: bool = False,
    argv: tuple[str, ...] = (),
    echo: Echo,
    stream: Echo | None,
) -> LocalRun:
    """`tau run resume` for a local run: same preflight as the cluster, same record."""
    from tau.engine.status import effective_state
    from tau.run.failures import Failure

    run = records.require(name)
    state, _ = effective_state(run)
    if state not in records.TERMINAL:
        raise UsageError(
            f"local run {name!r} is still running — cancel it first or wait for it to fail"
        )
    if state == records.SUCCEEDED:
        raise UsageError(f"local run {name!r} completed successfully — nothing to resume")
    reason = run.reason or str(Failure.UNKNOWN)
    if reason not in {str(f) for f in Failure} or not Failure(reason).retryable:
        raise UsageError(
            f"local run {name!r} failed with non-retryable reason {reason} — inspect "
            "logs/status before resubmitting manually"
        )
    if reason == Failure.OOM_KILLED and not force:
        raise UsageError(
            f"local run {name!r} failed with OOM — the same config will likely OOM again.\n"
            "Increase compute resources in your config, then resume with --force"
        )
    check_direct(loaded)
    if loaded.config_hash != run.config_hash:
        echo(
            f"warning: config hash changed ({run.config_hash[:8]} → {loaded.config_hash[:8]}) — "
            "the resumed run may behave differently"
        )
    plan = _plan(loaded, name, resolve(name), Path(run.data_root), Path(run.store), echo)
    checkpoint = plan.paths.local(checkpoint or plan.checkpoint)
    echo(f"failure reason: {reason}")
    echo(f"checkpoint: {checkpoint}")
    fresh = new_record(loaded, plan, argv)
    fresh.created_at, fresh.attempts = run.created_at, run.attempts
    records.save(fresh)
    write_scripts(plan)
    from tau.run.failures import resume_env

    env = dict(resume_env(tuple(plan.env.items()), checkpoint))
    return Supervisor(fresh, plan, echo=echo, stream=stream).supervise(env)


def check_direct(loaded: LoadedConfig) -> None:
    """A managed workflow cannot run on the local engine."""
    from tau.runconfig.managed import ManagedManifest

    config = loaded.config
    if isinstance(config, ManagedManifest) or config.is_managed_dispatch:
        raise UsageError(
            f"{loaded.path}: managed workflow configs cannot run on the local engine",
            hint="use a direct run config (engine: job or rayjob)",
        )


def _plan(
    loaded: LoadedConfig,
    name: str,
    resolution: Resolution,
    data_root: Path | None,
    store: Path | None,
    echo: Echo,
) -> LocalPlan:
    for warning in resolution.warnings:
        echo(f"warning: {warning}")
    plan = build_plan(
        resolution.intent,
        loaded=loaded,
        run_dir=records.run_dir(name),
        data_root=(data_root or default_data_root()).expanduser().resolve(),
        store=(store or default_store()).expanduser().resolve(),
        gpus=gpu_inventory.detect(),
        publication_id=secrets.token_hex(12),
    )
    for note in plan.notes:
        echo(f"note: {note}")
    return plan


def new_record(loaded: LoadedConfig, plan: LocalPlan, argv: tuple[str, ...]) -> LocalRun:
    intent = plan.intent
    experiment = intent.experiment
    return LocalRun(
        name=plan.name,
        kind=plan.kind,
        launcher=intent.launcher,
        config_path=str(Path(loaded.path).resolve()),
        config_hash=intent.provenance.config_hash,
        code_sha=intent.provenance.code_sha or "",
        supervisor_pid=os.getpid(),
        supervisor_stamp=procgroup.start_stamp(os.getpid()),
        gpus_requested=plan.gpus_needed,
        gpus_available=plan.gpus.count,
        data_root=str(plan.paths.data_root),
        output_dir=str(plan.output_dir),
        staging_dir=str(plan.staging_dir or ""),
        publication_id=intent.publication_id or "",
        store=plan.env.get(keys.ENV_EXP_STORE, ""),
        experiment={
            "project": experiment.project or "",
            "name": experiment.experiment_id or "",
            "group": experiment.group or "",
        },
        max_retries=plan.policy.max_retries if plan.policy else 0,
        retry_on=list(plan.policy.retry_on) if plan.policy else [],
        command=list(plan.argv),
        tau_command=" ".join(argv) if argv else " ".join(sys.argv),
    )


def write_scripts(plan: LocalPlan) -> None:
    """The entrypoint (and Tune driver) as the pod would see them under /script."""
    plan.script_dir.mkdir(parents=True, exist_ok=True)
    for file_name, content in plan.script_files.items():
        (plan.script_dir / file_name).write_bytes(content)

"""`tau run TARGET --local`: resolve, refuse early, record, then supervise to the end."""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau.engine import gpus as gpu_inventory
from tau.engine import records
from tau.engine.layout import default_data_root, default_store
from tau.engine.plan import LocalPlan, build_plan
from tau.engine.records import LocalRun
from tau.engine.supervise import Supervisor
from tau.errors import UsageError

Echo = Callable[[str], None]


def resolve_local(loaded: Any, run_name: str, argv: tuple[str, ...]):
    """The cluster's resolution with the offline layers; cluster-only values stay unresolved.

    Namespace, LocalQueue and ServiceAccount mean nothing locally, so the client dry-run
    mode (placeholders, no live reads) is the right resolution; its placeholder warnings
    are about the cluster and are dropped.
    """
    from tau.resolve.layers import Overrides
    from tau.resolve.request import resolve_request

    resolution = resolve_request(loaded, Overrides(run_name=run_name, dry_run="client"), argv=argv)
    resolution.warnings = [w for w in resolution.warnings if "placeholder" not in w]
    return resolution


def start(
    loaded: Any,
    *,
    data_root: Path | None = None,
    store: Path | None = None,
    argv: tuple[str, ...] = (),
    echo: Echo,
    stream: Echo | None,
    prepare: Callable[[LocalPlan], None] | None = None,
) -> LocalRun:
    """Run `loaded` locally to completion; the record is written before the process starts."""
    if loaded.is_managed or loaded.config.is_managed_dispatch:
        raise UsageError(
            f"{loaded.path}: managed workflow configs cannot run on the local engine",
            hint="use a direct run config (engine: job or rayjob)",
        )
    base = loaded.config.run_name or Path(loaded.path).stem
    name = records.reserve_name(records.check_name(base.lower()))
    run_dir = records.run_dir(name)
    try:
        resolution = resolve_local(loaded, name, argv)
        for warning in resolution.warnings:
            echo(f"warning: {warning}")
        plan = build_plan(
            resolution.intent,
            loaded=loaded,
            run_dir=run_dir,
            data_root=(data_root or default_data_root()).expanduser().resolve(),
            store=(store or default_store()).expanduser().resolve(),
            gpus=gpu_inventory.detect(),
            publication_id=secrets.token_hex(8),
        )
    except BaseException:
        shutil.rmtree(run_dir, ignore_errors=True)
        raise
    for note in plan.notes:
        echo(f"note: {note}")
    run = new_record(loaded, plan, argv)
    records.save(run)
    write_scripts(plan)
    if prepare is not None:
        prepare(plan)
    echo(f"local run {name} started ({run.kind}, {plan.gpus_needed} GPU(s))")
    return Supervisor(run, plan, echo=echo, stream=stream).supervise(dict(plan.env))


def new_record(loaded: Any, plan: LocalPlan, argv: tuple[str, ...]) -> LocalRun:
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
        gpus_requested=plan.gpus_needed,
        gpus_available=plan.gpus.count,
        data_root=str(plan.paths.data_root),
        output_dir=str(plan.output_dir),
        staging_dir=str(plan.staging_dir or ""),
        publication_id=intent.publication_id or "",
        store=plan.env.get("TAU_EXP_STORE", ""),
        experiment={
            "project": experiment.project or "",
            "name": experiment.experiment_id or "",
            "group": experiment.group or "",
        },
        max_retries=plan.policy.max_retries,
        retry_on=list(plan.policy.retry_on),
        command=list(plan.argv),
        tau_command=" ".join(argv) if argv else " ".join(sys.argv),
    )


def write_scripts(plan: LocalPlan) -> None:
    """The entrypoint (and Tune driver) as the pod would see them under /script."""
    plan.script_dir.mkdir(parents=True, exist_ok=True)
    for file_name, content in plan.script_files.items():
        (plan.script_dir / file_name).write_bytes(content)

"""`tau run resume`: resubmit a failed run from its checkpoint, after preflights.

The replacement is rendered (and validated) before the failed workload is deleted, so a
broken config never costs the evidence of the old run.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tau import keys
from tau.errors import RuntimeFailure, TauError, UsageError
from tau.lifecycle import objects as o
from tau.lifecycle import phases as ph
from tau.lifecycle.classify import diagnose
from tau.lifecycle.retry import delete_workload, durable_mount, emit_event
from tau.lifecycle.snapshot import Snapshot, collect
from tau.run.failures import Cause, Failure, resume_env
from tau.runconfig.models import DEFAULT_CHECKPOINT_ROOT

if TYPE_CHECKING:
    from tau.jsontypes import JSONObject
    from tau.lifecycle.submit import Prepared, Submitted

RESEARCHER = "researcher"


def relative(path: str | os.PathLike[str]) -> str:
    """The config path as the researcher would type it from here."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def check_from(value: str) -> None:
    if value and not value.startswith("/"):
        raise UsageError(f"--from must be an absolute path (starts with /); got {value!r}")


def preflight(snap: Snapshot, *, force: bool, resubmit: str = "tau run TARGET") -> Cause:
    """The failure to resume from; refuses anything that should not be resumed. `resubmit`
    is the command that submits the same config again (named in the refusal)."""
    name, namespace = snap.name, snap.namespace
    if not snap.found:
        raise RuntimeFailure(
            f'no Job or RayJob "{name}" found in namespace "{namespace}"', owner=RESEARCHER
        )
    still_running = RuntimeFailure(
        f'workload "{name}" is still running — cancel it first or wait for it to fail',
        owner=RESEARCHER,
    )
    job_active = snap.job is not None and int(o.status(snap.job).get("active") or 0) > 0
    ray_running = str(o.status(snap.primary_rayjob).get("jobDeploymentStatus") or "").lower()
    if job_active or ray_running == "running":
        raise still_running
    if ph.primary_succeeded(snap) or (
        ph.startup_complete(snap, ph.build(snap)) and not ph.startup_failed(snap)
    ):
        raise RuntimeFailure(
            f'workload "{name}" completed successfully — nothing to resume', owner=RESEARCHER
        )
    if not ph.startup_failed(snap):
        raise still_running
    cause = diagnose(snap)
    failure = cause.reason
    if not failure.retryable:
        raise RuntimeFailure(
            f'workload "{name}" failed with non-retryable reason {failure} ({cause.category}: '
            f"{cause.summary}) — resume (even with --force) only restarts preempted, evicted "
            "or OOM-killed runs",
            hint=f"read `tau run logs {name}`, fix the cause, then `tau run cancel {name}` and "
            f"resubmit with `{resubmit}`",
            owner=cause.owner or RESEARCHER,
        )
    if failure is Failure.OOM_KILLED and not force:
        raise RuntimeFailure(
            f'workload "{name}" failed with OOM — the same config will likely OOM again.\n'
            "Increase compute resources in your config, then resume with --force",
            owner=RESEARCHER,
        )
    return cause


def resume(
    prepared: Prepared,
    name: str,
    *,
    checkpoint: str = "",
    force: bool = False,
    dry_run: str = "",
    say: Callable[[str], None],
) -> list[JSONObject] | Submitted:
    """Preflight, render the replacement, delete the failed workload, submit; returns what
    was submitted (or the rendered objects for a dry run)."""
    from tau.lifecycle.submit import render_objects, submit, with_attempt

    check_from(checkpoint)
    kube, namespace = prepared.kube, prepared.namespace
    snap = collect(kube, namespace, name)
    resubmit = shlex.join(["tau", "run", "--config", relative(prepared.loaded.path)])
    cause = preflight(snap, force=force, resubmit=resubmit)
    failure = cause.reason
    configured = getattr(prepared.loaded.config, "run_name", "") or ""
    if configured and configured != name:
        say(f'note: config names job "{configured}" but resuming "{name}"')
    say(f"failure reason: {failure}")
    say(f"cause: {cause.category}: {cause.summary} (owner: {cause.owner})")
    owner = snap.job if snap.job is not None else snap.rayjob
    old_hash = ((owner or {}).get("metadata", {}).get("annotations") or {}).get(
        keys.CONFIG_HASH, ""
    )
    new_hash = prepared.intent.provenance.config_hash
    if old_hash and old_hash != new_hash:
        say(
            f"warning: config hash changed ({old_hash[:8]} → {new_hash[:8]}) — the resumed "
            "workload may behave differently"
        )
    directory = checkpoint or f"{DEFAULT_CHECKPOINT_ROOT}/{name}"
    if durable_mount(render_objects(prepared)[0], directory):
        say(f"checkpoint: {directory}")
        env = resume_env(prepared.env, directory)
    elif checkpoint:
        raise UsageError(
            f"--from {checkpoint} is on no volume the run mounts, so no checkpoint can be there",
            hint="pass a path under the run's storage (e.g. its data PVC at /data)",
        )
    else:
        say(
            f"note: no volume is mounted at {directory}, so the resumed run starts from "
            "scratch without TAU_RESUME_FROM; mount storage there to resume from checkpoints"
        )
        directory = ""
        env = prepared.env
    replacement = with_attempt(prepared, env)
    try:
        objects = render_objects(replacement)
    except TauError as error:
        raise RuntimeFailure(
            f"validating replacement workload before deleting old workload: {error.one_line()}"
        ) from None
    if dry_run:
        return objects
    say(f"deleting failed workload {namespace}/{name}...")
    delete_workload(kube, namespace, name)
    submitted = submit(replacement)
    emit_event(
        kube,
        collect(kube, namespace, name),
        f"{name}-resume-{(replacement.intent.provenance.submission_id or '')[:8]}",
        "RunResumed",
        f"submission_id={name} resumed_after={failure} checkpoint={directory or 'none'}",
        say,
    )
    return submitted

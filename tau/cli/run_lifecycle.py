"""`tau run status|list|logs|get|cancel|resume|history`: flags -> `tau.lifecycle` -> print.

Registered on the `tau run` group by `register(app)`; heavy modules load inside each
command so `tau run validate` stays fast.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click
import typer

from tau.cli import local_run
from tau.cli.options import context_option, duration_seconds, namespace_option, workspace_option
from tau.errors import RuntimeFailure, UsageError

if TYPE_CHECKING:
    from tau.connection import Target
    from tau.lifecycle.snapshot import Snapshot
    from tau.resolve.layers import Overrides
    from tau.runconfig import LoadedConfig

NAME = typer.Argument(..., metavar="NAME", help="Run name (the Job or RayJob name).")


def _target(context: str, namespace: str, workspace: str = "", project: str = "") -> Target:
    from tau.connection import resolve_target

    return resolve_target(
        context=context, namespace=namespace, workspace=workspace, project=project
    )


def _say(text: str) -> None:
    click.echo(text, err=True)


def _project(ctx: typer.Context) -> str:
    return (ctx.parent.params.get("project") if ctx.parent else "") or ""


def status(
    ctx: typer.Context,
    name: str = NAME,
    namespace: str = namespace_option(),
    workspace: str = workspace_option(),
    context: str = context_option(),
    run_profile: bool = typer.Option(
        False, "--run-profile", help="Add current GPU telemetry from dcgm-exporter (read-only)."
    ),
    watch: bool = typer.Option(False, "--watch", help="Refresh until ready, failed or stopped."),
    interval: str = typer.Option("2s", "--interval", help="Longest wait between refreshes."),
    max_iterations: int = typer.Option(
        0, "--max-iterations", help="Stop watching after N refreshes (0 = until done)."
    ),
    diagnostic_hints: bool = typer.Option(
        False, "--diagnostic-hints", help="Print kubectl commands for deeper inspection."
    ),
    output: str = typer.Option("table", "-o", "--output", help="table or json."),
    local: bool = local_run.LOCAL,
) -> None:
    """Show the ordered startup phases of a run and the first layer that is not done.

    \b
    Examples:
      tau run status train-x1 --watch
      tau run status train-x1 -o json | jq .phases
      tau run status train-x1 --diagnostic-hints
    """
    if output not in ("table", "json"):
        raise UsageError("--output must be table or json")
    if diagnostic_hints and watch:
        raise UsageError("--diagnostic-hints cannot be used with --watch")
    if output == "json" and watch:
        raise UsageError("--output json cannot be used with --watch; poll with -o json instead")
    if diagnostic_hints and output == "json":
        raise UsageError(
            "--diagnostic-hints cannot be used with --output json; the JSON already carries "
            "diagnostics"
        )
    if max_iterations < 0:
        raise UsageError("--max-iterations must be >= 0")
    seconds = duration_seconds("--interval", interval)
    if local_run.routes(name, local):
        return local_run.status(name, output, watch=watch)
    from tau.cli.output import dump_json
    from tau.lifecycle import phases as ph
    from tau.lifecycle import status as st
    from tau.lifecycle.snapshot import collect

    target = _target(context, namespace, workspace, _project(ctx))
    kube = target.client()

    def fetch() -> tuple[Snapshot, dict[str, Any]]:
        snap = collect(kube, target.namespace, name)
        profile = None
        if run_profile:
            from tau.lifecycle.profile import run_profile as read_profile

            profile = read_profile(kube, snap)
        return snap, st.document(snap, target, profile=profile)

    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    if not watch:
        snap, doc = fetch()
        if output == "json":
            sys.stdout.write(dump_json(doc) + "\n")
        else:
            st.render(doc, console)
            if diagnostic_hints:
                console.print("\nDeep diagnostics (kubectl escape hatches):", markup=False)
                for line in st.diagnostic_hints(snap, target):
                    console.print(f"  {line}", markup=False)
        if not snap.found:
            raise RuntimeFailure(
                f'no Job or RayJob "{name}" found in namespace "{target.namespace}"',
                hint="list runs with `tau run list`",
                owner="researcher: run name or namespace",
            )
        return
    from tau.lifecycle.watch import wait_for_change

    iteration = 0
    while True:
        iteration += 1
        snap, doc = fetch()
        if sys.stdout.isatty():
            sys.stdout.write("\x1b[H\x1b[2J")
        console.print(f"watching {target.namespace}/{name} every {interval}\n", markup=False)
        st.render(doc, console)
        phases = ph.build(snap)
        if ph.watch_failed(snap):
            cause = doc.get("failure") or {}
            raise RuntimeFailure(
                f"startup phase failed for {target.namespace}/{name}"
                + (f" ({cause['reason']}: {cause['category']})" if cause else ""),
                hint=f"see `tau run status {name} --diagnostic-hints`",
                owner=cause.get("owner")
                or next((p.owner for p in phases if p.status == ph.WARNING and p.owner), ""),
            )
        if ph.watch_complete(snap, phases):
            return
        if max_iterations and iteration >= max_iterations:
            return
        wait_for_change(kube, snap, seconds)


def list_(
    namespace: str = namespace_option("Namespace to list (default: from the workspace)."),
    workspace: str = workspace_option(),
    context: str = context_option(),
    queue: str = typer.Option("", "--queue", help="Only runs of this LocalQueue."),
    include_external: bool = typer.Option(
        False, "--include-external", help="Also batch Jobs not submitted by tau (SOURCE column)."
    ),
    output: str = typer.Option("table", "-o", "--output", help="table or json."),
    local: bool = local_run.LIST_LOCAL,
) -> None:
    """List runs (Jobs and RayJobs) in a namespace, newest first.

    \b
    Examples:
      tau run list                          # the workspace namespace
      tau run list --include-external -o json
      tau run list --local                  # local-engine runs on this machine
    """
    if output not in ("table", "json"):
        raise UsageError("--output must be table or json")
    if local:
        return local_run.list_(output)
    from tau.cli.output import dump_json, print_table
    from tau.lifecycle.runs import list_runs

    target = _target(context, namespace, workspace)
    data = list_runs(
        target.client(), target.namespace, queue=queue, include_external=include_external
    )
    if output == "json":
        sys.stdout.write(dump_json(data) + "\n")
        return
    click.echo("History: live-only")
    if not data["runs"]:
        click.echo(f'No jobs found in namespace "{target.namespace}"')
        return
    columns = ["NAME", "KIND", "STATUS", "AGE"] + (["SOURCE"] if include_external else [])
    rows = [
        [r["name"], r["kind"], r["status"], r["age"]] + ([r["source"]] if include_external else [])
        for r in data["runs"]
    ]
    print_table(columns, rows)


def log_options() -> dict[str, Any]:
    return {
        "follow": typer.Option(False, "-f", "--follow", help="Stream new lines."),
        "tail": typer.Option(200, "--tail", help="Lines per container (-1 = all)."),
        "container": typer.Option("", "-c", "--container", help="Container to read."),
        "all_containers": typer.Option(False, "--all-containers", help="Every container."),
        "previous": typer.Option(False, "--previous", help="The previous (crashed) instance."),
        "timestamps": typer.Option(False, "--timestamps", help="Prefix each line with its time."),
        "prefix": typer.Option(False, "--prefix", help="Prefix lines with pod/container."),
    }


_LOG = log_options()


def logs(
    name: str = NAME,
    follow: bool = _LOG["follow"],
    tail: int = _LOG["tail"],
    container: str = _LOG["container"],
    all_containers: bool = _LOG["all_containers"],
    previous: bool = _LOG["previous"],
    timestamps: bool = _LOG["timestamps"],
    prefix: bool = _LOG["prefix"],
    namespace: str = namespace_option(),
    workspace: str = workspace_option(),
    context: str = context_option(),
    local: bool = local_run.LOCAL,
) -> None:
    """Print a run's logs: the Job's pods, or a RayJob's driver via its head pod."""
    from tau.lifecycle.logs import LogOptions, streams, write_logs

    opts = LogOptions(container, all_containers, previous, timestamps, prefix, tail, follow)
    if local_run.routes(name, local):
        return local_run.logs(name, opts)
    target = _target(context, namespace, workspace)
    write_logs(streams(target.client(), target.namespace, name, opts), opts, click.echo)


def discover_logs(
    name: str,
    opts: Any,
    *,
    namespace: str,
    workspace: str,
    context: str,
) -> None:
    """`tau logs`: with no route flags, search the connected workspace then cached ones."""
    if local_run.routes(name, False):
        return local_run.logs(name, opts)
    from tau.connection import cached_targets
    from tau.lifecycle.logs import discover, streams, write_logs

    if context or namespace or workspace:
        target = _target(context, namespace, workspace)
    else:
        try:
            current = _target("", "")
        except UsageError:
            current = None
        if current is not None and current.source == "kubeconfig":
            cached = cached_targets()
            target = discover(name, current, cached) if cached else current
        else:
            target = discover(name, current, cached_targets())
    write_logs(streams(target.client(), target.namespace, name, opts), opts, click.echo)


def cancel(
    name: str = NAME,
    namespace: str = namespace_option(),
    workspace: str = workspace_option(),
    context: str = context_option(),
    wait: bool = typer.Option(
        True, "--wait/--no-wait", help="Wait until no pod of the run holds a node."
    ),
    teardown_timeout: str = typer.Option("12m", "--teardown-timeout", help="Longest wait."),
    interval: str = typer.Option("2s", "--interval", help="Poll interval while waiting."),
    timeout: str = typer.Option("30s", "--timeout", help="MultiKueue manager cleanup wait."),
    local: bool = local_run.LOCAL,
) -> None:
    """Stop a run: delete its Job/RayJob and headless Service; Kueue releases the quota.

    A local run's whole process tree is killed instead.

    \b
    Examples:
      tau run cancel train-x1               # waits until its pods are gone
      tau run cancel train-x1 --no-wait
    """
    if local_run.routes(name, local):
        return local_run.cancel(name)
    from tau.lifecycle.runs import cancel as do_cancel

    limit = duration_seconds("--teardown-timeout", teardown_timeout)
    every = duration_seconds("--interval", interval)
    duration_seconds("--timeout", timeout)
    target = _target(context, namespace, workspace)
    do_cancel(
        target.client(),
        target.namespace,
        name,
        wait=wait,
        teardown_timeout=limit,
        interval=every,
        say=click.echo,
    )


def register(app: typer.Typer) -> None:
    app.command("status")(status)
    app.command("list")(list_)
    app.command("logs")(logs)
    app.command("cancel")(cancel)
    app.command("resume")(resume)
    app.command("get")(get)
    from tau.cli.groups import TargetGroup
    from tau.cli.run_record import RECORD_EPILOG, record

    history_app = typer.Typer(
        rich_markup_mode=None,
        cls=TargetGroup,
        add_completion=False,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )
    history_app.callback(invoke_without_command=True)(history)
    history_app.command("record", epilog=RECORD_EPILOG)(record)
    app.add_typer(history_app, name="history")


def submit_run(
    loaded: LoadedConfig,
    overrides: Overrides,
    *,
    project: str,
    system_namespace: str,
    output: str = "",
) -> None:
    """`tau run` without --dry-run=client: create (or server-validate) the workload.

    `output` (yaml|json) prints a server dry run's objects as the API server returned them;
    without it a dry run prints one line per object."""
    from tau.lifecycle.retry import run_retries
    from tau.lifecycle.submit import next_steps, server_dry_run, submit
    from tau.run.failures import policy_from
    from tau.run.plan import Mode, plan

    if output and overrides.dry_run == "server":
        from tau.cli.dryrun import OUTPUTS

        if output not in OUTPUTS:
            raise UsageError("--output must be one of: yaml, json (for --dry-run)")

    prepared = plan(
        loaded,
        overrides,
        Mode.CLUSTER,
        project=project,
        argv=("tau", *sys.argv[1:]),
        system_namespace=system_namespace,
        say=_say,
    ).connection()
    if overrides.dry_run == "server":
        warnings: list[str] = []
        answered = server_dry_run(prepared, warnings)
        _pass_on(warnings)
        if output:
            from tau.cli.dryrun import dump
            from tau.render import redact_secrets

            sys.stdout.write(dump(redact_secrets(answered), output))
            return
        for obj in answered:
            group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
            kind = obj["kind"].lower() + (f".{group}" if group else "")
            click.echo(f"{kind}/{obj['metadata']['name']} created (server dry run)")
        return
    submitted = submit(prepared)
    _pass_on(submitted.warnings)
    verb = "recovered (same submission)" if submitted.reused else "submitted"
    click.echo(f"{submitted.kind} {submitted.namespace}/{submitted.name} {verb}")
    click.echo(f"Run name: {submitted.name}")
    click.echo("Next:")
    for line in next_steps(submitted, prepared.target):
        click.echo(f"  {line}")
    policy = policy_from(loaded.config, prepared.name)
    if policy is not None:
        run_retries(prepared, policy, say=_say)


def _pass_on(warnings: Any) -> None:
    """The API server's warnings (PodSecurity's among them), one stderr line each."""
    from tau.errors import clean

    for text in warnings:
        _say(f"warning: API server: {clean(text)}")


def resume(
    ctx: typer.Context,
    name: str = NAME,
    config: str = typer.Option(..., "-c", "--config", help="The run config to resubmit."),
    namespace: str = namespace_option(),
    context: str = context_option(),
    dry_run: str = typer.Option("", "--dry-run", help="client or server: render, delete nothing."),
    from_: str = typer.Option(
        "", "--from", help="Checkpoint directory (absolute; default /data/checkpoints/...)."
    ),
    force: bool = typer.Option(False, "--force", help="Resume even after an OOM kill."),
    local: bool = local_run.LOCAL,
) -> None:
    """Resubmit a failed run with TAU_RESUME_FROM set, after checking it should be resumed.

    Refuses runs that are still running, succeeded, or failed for an unknown
    reason; an OOM-killed run needs --force (change its resources first).

    \b
    Examples:
      tau run resume train-x1 -c tau/train.yaml
      tau run resume train-x1 -c tau/train.yaml --from /data/ckpt/step-900 --force
    """
    from pathlib import Path

    from tau.lifecycle.resume import check_from
    from tau.lifecycle.resume import resume as do_resume
    from tau.resolve.layers import Overrides
    from tau.run.plan import Mode, plan
    from tau.runconfig import load
    from tau.runconfig.managed import ManagedManifest

    if dry_run and dry_run not in ("client", "server"):
        raise UsageError("--dry-run must be one of: client, server")
    check_from(from_)
    if local_run.routes(name, local):
        if dry_run:
            raise UsageError("--dry-run applies to cluster runs; a local resume runs at once")
        return local_run.resume(name, config=config, checkpoint=from_, force=force)
    loaded = load(Path(config))
    if isinstance(loaded.config, ManagedManifest) or loaded.config.is_managed_dispatch:
        raise UsageError(
            f"{config}: tau run resume restarts direct run configs; a managed workflow is "
            "resubmitted with `tau run --config` (its trainer resumes from its own checkpoints)"
        )
    overrides = Overrides(
        namespace=namespace, context=context, run_name=name, dry_run=dry_run or ""
    )
    prepared = plan(
        loaded,
        overrides,
        Mode.CLUSTER,
        project=_project(ctx),
        argv=("tau", *sys.argv[1:]),
        system_namespace=(ctx.parent.params.get("system_namespace") if ctx.parent else "")
        or "tau-system",
        say=_say,
    ).connection()
    result = do_resume(prepared, name, checkpoint=from_, force=force, dry_run=dry_run, say=_say)
    if dry_run:
        from tau.cli.dryrun import dump
        from tau.render import redact_secrets

        sys.stdout.write(dump(redact_secrets(result), "yaml"))
        _say("dry run: nothing was deleted or submitted")
        return
    click.echo(f"{result.kind} {result.namespace}/{result.name} resumed")


def get(
    name: str = NAME,
    artifact: str = typer.Option("", "--artifact", help="One file, relative to the results."),
    path: str = typer.Option("", "--path", help="Result path (with --pvc; external Jobs)."),
    pvc: str = typer.Option("", "--pvc", help="PVC holding --path."),
    output: str = typer.Option("table", "-o", "--output", help="table, json or raw."),
    namespace: str = namespace_option(),
    workspace: str = workspace_option(),
    context: str = context_option(),
    local: bool = local_run.LOCAL,
) -> None:
    """Fetch a run's durable results through a short-lived read-only reader Job.

    A local run's results are read from this machine's data root.

    \b
    Examples:
      tau run get train-x1                  # list the result directory
      tau run get train-x1 --artifact model.json -o raw > model.json
    """
    if output not in ("table", "json", "raw"):
        raise UsageError("--output must be table, json or raw")
    if local_run.routes(name, local):
        return local_run.get(name, artifact=artifact, output=output)
    from tau.cli.output import dump_json
    from tau.lifecycle.artifacts import fetch
    from tau.run.results import inside

    if artifact:
        inside("/", artifact)  # reject escapes before touching the cluster
    target = _target(context, namespace, workspace)
    result = fetch(target.client(), target.namespace, name, artifact=artifact, path=path, pvc=pvc)
    if output == "json":
        sys.stdout.write(dump_json(result) + "\n")
        return
    if output == "raw":
        if result["directory"]:
            raise UsageError("-o raw prints one file; pick it with --artifact")
        sys.stdout.write(result["content"])
        return
    click.echo(f"PATH: {result['path']}")
    click.echo(f"PVC: {result['pvc']}")
    if not result["directory"]:
        click.echo("---")
        click.echo(result["content"])
        return
    click.echo("(directory)")
    click.echo("ENTRIES:" if result["entries"] else "(empty)")
    for entry in result["entries"]:
        click.echo(f"  {entry}")
    if result.get("checkpoint"):
        click.echo(f"checkpoint: {result['checkpoint']}")
    click.echo(f"Fetch one file with: tau run get {name} --artifact <NAME>")


def history(
    ctx: typer.Context,
    name: str = typer.Argument(
        None, metavar="NAME", help="Run name (the Job or RayJob name).", show_default=False
    ),
    output: str = typer.Option("table", "-o", "--output", help="table or json."),
    namespace: str = namespace_option(),
    workspace: str = workspace_option(),
    context: str = context_option(),
    local: bool = local_run.LOCAL,
) -> None:
    """Attempts, retries, resumes and the current state of a run.

    `tau run history record` is the lifecycle recorder daemon (see its --help).

    \b
    Examples:
      tau run history train-x1
      tau run history train-x1 -o json | jq .entries
    """
    if ctx.invoked_subcommand:
        return
    if not name:
        raise UsageError("missing NAME: tau run history NAME (or tau run history record)")
    if output not in ("table", "json"):
        raise UsageError("--output must be table or json")
    if local_run.routes(name, local):
        return local_run.history(name, output)
    from tau.cli.output import dump_json, print_table
    from tau.kube.resources import EVENTS
    from tau.lifecycle.history import history as build
    from tau.lifecycle.snapshot import collect

    target = _target(context, namespace, workspace)
    kube = target.client()
    snap = collect(kube, target.namespace, name)
    data = build(snap, kube.list(EVENTS, target.namespace))
    if output == "json":
        sys.stdout.write(dump_json(data) + "\n")
        return
    if not data["found"] and not data["entries"]:
        raise RuntimeFailure(
            f'no Job, RayJob or retry history for "{name}" in namespace "{target.namespace}"'
        )
    click.echo(f"Run: {target.namespace}/{name}")
    click.echo(f"State: {data['displayState']} (attempt {data['attempt']})")
    cause = data["failure"]
    if cause:
        owner = f" (owner: {cause['owner']})" if cause["owner"] else ""
        click.echo(f"Failure: {cause['reason']} — {cause['category']}: {cause['summary']}{owner}")
    if data["resumedFrom"]:
        click.echo(f"Resumed from: {data['resumedFrom']}")
    if data["entries"]:
        rows = [[e["time"], e["event"], e["attempt"], e["failure"]] for e in data["entries"]]
        print_table(["TIME", "EVENT", "ATTEMPT", "FAILURE"], rows)
    else:
        click.echo("No retries or resumes recorded.")

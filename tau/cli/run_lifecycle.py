"""`tau run status|list|logs|get|cancel|resume|history`: flags -> a `tau.run` backend.

Each verb checks its flags, resolves its backend once (`tau.run.backend.select`: --local or
a local run's NAME is the local engine, anything else the cluster) and calls it. Registered
on the `tau run` group by `register(app)`; heavy modules load inside each command so `tau
run validate` stays fast.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import click
import typer

from tau.cli.options import context_option, duration_seconds, namespace_option, workspace_option
from tau.cli.output import check_output, output_option
from tau.errors import UsageError

if TYPE_CHECKING:
    from tau.cli.documents import Document
    from tau.lifecycle.logs import LogOptions
    from tau.run.backend import Backend, Route, Terminal

LOCAL = typer.Option(
    False, "--local", help="A run of the local engine (implied when NAME is a local run)."
)
LIST_LOCAL = typer.Option(False, "--local", help="List the local engine's runs on this machine.")

NAME = typer.Argument(..., metavar="NAME", help="Run name (the Job or RayJob name).")


def terminal(output: str = "table", model: type[Document] | None = None) -> Terminal:
    """The printers a backend prints through. A read verb passes its `-o` value and the
    model of its document (`tau.cli.documents`), so json and yaml print the same validated
    document; the other verbs print none."""
    from tau.cli.output import emit, print_table
    from tau.run.backend import Terminal

    def document(data: Mapping[str, object]) -> None:
        if model is None:
            raise TypeError("this verb has no -o json|yaml document")
        emit(model.model_validate(data), output)

    return Terminal(
        out=click.echo,
        err=lambda text: click.echo(text, err=True),
        table=print_table,
        document=document,
        status=_status,
        countdown=_countdown,
    )


def _countdown(seconds: float) -> None:
    """A retry's backoff: a visible countdown when stderr is a terminal, a plain wait otherwise
    (the line before it already said how long)."""
    from tau.run.failures import format_duration

    if not sys.stderr.isatty() or seconds < 2:
        time.sleep(seconds)
        return
    remaining = seconds
    while remaining > 0:
        sys.stderr.write(f"\r  retrying in {format_duration(remaining)} ")
        sys.stderr.flush()
        step = min(1.0, remaining)
        time.sleep(step)
        remaining -= step
    sys.stderr.write("\r" + " " * 30 + "\r")


def _status(doc: Mapping[str, object]) -> None:
    from rich.console import Console

    from tau.cli.status_view import render

    render(doc, Console(highlight=False, soft_wrap=True))


def backend(name: str | None, local: bool, route: Route, *, data_root: str = "") -> Backend:
    """The one choice of engine for this command: --local, or NAME a local run's."""
    from tau.run.select import select

    return select(name, local=local, route=route, data_root=data_root)


def route(
    context: str = "", namespace: str = "", workspace: str = "", ctx: typer.Context | None = None
) -> Route:
    """The cluster route flags; `--project` and `--system-namespace` belong to `tau run`."""
    from tau.run.backend import Route

    parent = ctx.parent.params if ctx is not None and ctx.parent else {}
    return Route(
        context=context,
        namespace=namespace,
        workspace=workspace,
        project=parent.get("project") or "",
        system_namespace=parent.get("system_namespace") or "tau-system",
    )


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
    output: str = output_option(),
    local: bool = LOCAL,
) -> None:
    """Show the ordered startup phases of a run and the first layer that is not done.

    \b
    Examples:
      tau run status train-x1 --watch
      tau run status train-x1 -o json | jq .phases
      tau run status train-x1 --diagnostic-hints
    """
    check_output(output)
    if diagnostic_hints and watch:
        raise UsageError("--diagnostic-hints cannot be used with --watch")
    if output != "table" and watch:
        raise UsageError(
            f"--output {output} cannot be used with --watch; poll with -o {output} instead"
        )
    if diagnostic_hints and output != "table":
        raise UsageError(
            f"--diagnostic-hints cannot be used with --output {output}; the document already "
            "carries diagnostics"
        )
    if max_iterations < 0:
        raise UsageError("--max-iterations must be >= 0")
    seconds = duration_seconds("--interval", interval)
    from tau.cli.documents import RunStatus
    from tau.run.backend import StatusRequest

    request = StatusRequest(
        name,
        output=output,
        watch=watch,
        interval=interval,
        seconds=seconds,
        max_iterations=max_iterations,
        run_profile=run_profile,
        diagnostic_hints=diagnostic_hints,
    )
    chosen = backend(name, local, route(context, namespace, workspace, ctx))
    chosen.status(request, terminal(output, RunStatus))


def list_(
    ctx: typer.Context,
    namespace: str = namespace_option("Namespace to list (default: from the workspace)."),
    workspace: str = workspace_option(),
    context: str = context_option(),
    queue: str = typer.Option("", "--queue", help="Only runs of this LocalQueue."),
    include_external: bool = typer.Option(
        False, "--include-external", help="Also batch Jobs not submitted by tau (SOURCE column)."
    ),
    output: str = output_option(),
    local: bool = LIST_LOCAL,
) -> None:
    """List runs (Jobs and RayJobs) in a namespace, newest first.

    \b
    Examples:
      tau run list                          # the workspace namespace
      tau run list --include-external -o json
      tau run list --local                  # local-engine runs on this machine
    """
    check_output(output)
    from tau.cli.documents import RunList
    from tau.run.backend import ListRequest

    request = ListRequest(output=output, queue=queue, include_external=include_external)
    chosen = backend(None, local, route(context, namespace, workspace, ctx))
    chosen.list(request, terminal(output, RunList))


# The flags `tau run logs` and `tau logs` share.
FOLLOW: bool = typer.Option(False, "-f", "--follow", help="Stream new lines.")
TAIL: int = typer.Option(200, "--tail", help="Lines per container (-1 = all).")
CONTAINER: str = typer.Option("", "-c", "--container", help="Container to read.")
ALL_CONTAINERS: bool = typer.Option(False, "--all-containers", help="Every container.")
PREVIOUS: bool = typer.Option(False, "--previous", help="The previous (crashed) instance.")
TIMESTAMPS: bool = typer.Option(False, "--timestamps", help="Prefix each line with its time.")
PREFIX: bool = typer.Option(False, "--prefix", help="Prefix lines with pod/container.")
KUSTO_CLUSTER: str = typer.Option(
    "",
    "--kusto-cluster",
    help="Once the head pod is gone: the exact Cluster value of Logs.ContainerLogs rows.",
)
KUSTO_ENDPOINT: str = typer.Option(
    "", "--kusto-endpoint", help="Once the head pod is gone: the ADX query endpoint (https)."
)
KUSTO_DATABASE: str = typer.Option(
    "", "--kusto-database", help="Once the head pod is gone: the ADX logs database."
)


def log_options(
    container: str,
    all_containers: bool,
    previous: bool,
    timestamps: bool,
    prefix: bool,
    tail: int,
    follow: bool,
    kusto: tuple[str, str, str],
) -> LogOptions:
    """The read options; a malformed --kusto-endpoint is refused before anything is read."""
    from tau.lifecycle.logs import LogOptions
    from tau.lifecycle.offload import LogOffload, flag_connection

    offload = flag_connection(LogOffload(*kusto))
    return LogOptions(
        container, all_containers, previous, timestamps, prefix, tail, follow, offload
    )


def logs_verb(*, discover: bool) -> Callable[..., None]:
    """`tau run logs` (the compatibility path) reads the run its route flags lead to; `tau
    logs` (`discover`) without route flags also searches every cached workspace connection.
    Both come from here so that they keep one set of flags."""

    def logs(
        ctx: typer.Context,
        name: str = NAME,
        follow: bool = FOLLOW,
        tail: int = TAIL,
        container: str = CONTAINER,
        all_containers: bool = ALL_CONTAINERS,
        previous: bool = PREVIOUS,
        timestamps: bool = TIMESTAMPS,
        prefix: bool = PREFIX,
        kusto_cluster: str = KUSTO_CLUSTER,
        kusto_endpoint: str = KUSTO_ENDPOINT,
        kusto_database: str = KUSTO_DATABASE,
        namespace: str = namespace_option(),
        workspace: str = workspace_option(),
        context: str = context_option(),
        local: bool = LOCAL,
    ) -> None:
        """Print a run's logs: the Job's pods, or a RayJob's driver via its head pod (from the
        central log offload once the head pod is gone)."""
        opts = log_options(
            container,
            all_containers,
            previous,
            timestamps,
            prefix,
            tail,
            follow,
            (kusto_cluster, kusto_endpoint, kusto_database),
        )
        chosen = backend(name, local, route(context, namespace, workspace, ctx))
        chosen.logs(name, opts, terminal(), discover=discover)

    return logs


def cancel(
    ctx: typer.Context,
    name: str = NAME,
    namespace: str = namespace_option(),
    workspace: str = workspace_option(),
    context: str = context_option(),
    wait: bool = typer.Option(
        True, "--wait/--no-wait", help="Wait until no pod of the run holds a node."
    ),
    teardown_timeout: str = typer.Option("12m", "--teardown-timeout", help="Longest wait."),
    interval: str = typer.Option("2s", "--interval", help="Poll interval while waiting."),
    timeout: str = typer.Option(
        "30s",
        "--timeout",
        help="Longest wait for a MultiKueue run's manager Workloads to be removed.",
    ),
    local: bool = LOCAL,
) -> None:
    """Stop a run: delete its Job/RayJob and headless Service; Kueue releases the quota.

    A local run's whole process tree is killed instead.

    \b
    Examples:
      tau run cancel train-x1               # waits until its pods are gone
      tau run cancel train-x1 --no-wait
    """
    from tau.run.backend import CancelRequest

    limit = duration_seconds("--teardown-timeout", teardown_timeout)
    every = duration_seconds("--interval", interval)
    cleanup = duration_seconds("--timeout", timeout)
    request = CancelRequest(
        name, wait=wait, teardown_timeout=limit, interval=every, timeout=cleanup
    )
    backend(name, local, route(context, namespace, workspace, ctx)).cancel(request, terminal())


def register(app: typer.Typer) -> None:
    app.command("status")(status)
    app.command("list")(list_)
    app.command("logs")(logs_verb(discover=False))
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
    local: bool = LOCAL,
) -> None:
    """Resubmit a failed run with TAU_RESUME_FROM set, after checking it should be resumed.

    Refuses runs that are still running, succeeded, or failed for an unknown
    reason; an OOM-killed run needs --force (change its resources first).

    \b
    Examples:
      tau run resume train-x1 -c tau/train.yaml
      tau run resume train-x1 -c tau/train.yaml --from /data/ckpt/step-900 --force
    """
    from tau.lifecycle.resume import check_from
    from tau.run.backend import ResumeRequest

    if dry_run and dry_run not in ("client", "server"):
        raise UsageError("--dry-run must be one of: client, server")
    check_from(from_)
    request = ResumeRequest(name, config, checkpoint=from_, force=force, dry_run=dry_run or "")
    backend(name, local, route(context, namespace, ctx=ctx)).resume(request, terminal())


def get(
    ctx: typer.Context,
    name: str = NAME,
    artifact: str = typer.Option("", "--artifact", help="One file, relative to the results."),
    path: str = typer.Option("", "--path", help="Result path (with --pvc; external Jobs)."),
    pvc: str = typer.Option("", "--pvc", help="PVC holding --path."),
    output: str = output_option(raw="one file's bytes"),
    namespace: str = namespace_option(),
    workspace: str = workspace_option(),
    context: str = context_option(),
    local: bool = LOCAL,
) -> None:
    """Fetch a run's durable results through a short-lived read-only reader Job.

    A local run's results are read from this machine's data root.

    \b
    Examples:
      tau run get train-x1                  # list the result directory
      tau run get train-x1 --artifact model.json -o raw > model.json
    """
    check_output(output, "raw")
    from tau.cli.documents import RunResults
    from tau.run.backend import GetRequest

    request = GetRequest(name, artifact=artifact, path=path, pvc=pvc, output=output)
    chosen = backend(name, local, route(context, namespace, workspace, ctx))
    chosen.get(request, terminal(output, RunResults))


def history(
    ctx: typer.Context,
    name: str = typer.Argument(
        None, metavar="NAME", help="Run name (the Job or RayJob name).", show_default=False
    ),
    output: str = output_option(),
    namespace: str = namespace_option(),
    workspace: str = workspace_option(),
    context: str = context_option(),
    local: bool = LOCAL,
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
    check_output(output)
    from tau.cli.documents import RunHistory

    chosen = backend(name, local, route(context, namespace, workspace, ctx))
    chosen.history(name, output, terminal(output, RunHistory))

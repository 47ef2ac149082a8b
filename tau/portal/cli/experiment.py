"""`taugrid-portal experiment ...`: flags -> tau.evidence / tau.portal -> print.

Every subcommand resolves the store the same way (`--store`, `TAU_EXP_STORE`, or the
scoped composite) and prints with `-o`.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from tau import keys
from tau.cli.output import dump_json, emit, print_table
from tau.errors import UsageError
from tau.portal.cli.aliases import AliasGroup
from tau.portal.remote import DEFAULT_PORTAL_URL

TABLE_JSON = click.Choice(["table", "json", "yaml"], case_sensitive=False)


Command = TypeVar("Command", bound=Callable[..., Any])


def _output(
    choice: click.Choice[str] = TABLE_JSON, default: str = "table"
) -> Callable[[Command], Command]:
    return click.option(
        "-o",
        "--output",
        "output",
        type=choice,
        default=default,
        show_default=True,
        help="Output format.",
    )


def _kv(values: tuple[str, ...], flag: str) -> dict[str, str]:
    result = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag} {item!r} must be KEY=VALUE", owner="the user")
        result[key.strip()] = value
    return result


def store_path(ctx: click.Context) -> Path:
    from tau.evidence import resolve_store_path

    if ctx.meta.get("tau.workspace"):
        raise UsageError(
            f"--workspace reads through the Portal and works with search, stellar, compare and "
            f"plot; {ctx.info_name} needs a local store (--store)",
            owner="researcher",
        )
    return resolve_store_path(ctx.meta.get("tau.store") or None)


def portal_source(ctx: click.Context) -> Any:
    """The workspace's Portal when --workspace is given, else None (the local store)."""
    from tau.portal.remote import PortalSource

    workspace = ctx.meta.get("tau.workspace")
    return PortalSource(ctx.meta["tau.portal"], workspace) if workspace else None


def open_store(ctx: click.Context) -> Any:
    """The store for a read verb: read-only, an older catalogue is refused, never migrated."""
    from tau.evidence import Store

    return Store.open(store_path(ctx), migrate=False)


def _document(data: Any, output: str) -> None:
    """json or yaml of one document, through tau/cli/output.py like every tau read verb."""
    emit(data, output.lower())


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


@click.group(
    cls=AliasGroup,
    aliases={"runs": "search", "dashboard": "stellar"},
    help="Record, search, compare and show experiment evidence in the local store.",
    epilog=(
        "\b\nExamples:\n"
        "  taugrid-portal experiment --store .tau/store init toy-regression\n"
        "  taugrid-portal experiment import jsonl --run r1 --history metrics.jsonl "
        "--experiment toy-regression\n"
        "  taugrid-portal experiment search -q loss --metric-filter 'loss<0.1'\n"
        "  taugrid-portal experiment stellar toy-regression     # toy-regression.stellar.html\n"
        "  taugrid-portal experiment serve --default-target toy-regression"
    ),
)
@click.option(
    "--store",
    "store",
    default="",
    metavar="PATH",
    help="Store directory (default: $TAU_EXP_STORE, else "
    "$TAU_EXP_STORE_ROOT/$TAU_CONTEXT/$TAU_TEAM/$TAU_PROJECT).",
)
@click.option(
    "--workspace",
    default="",
    metavar="NAME",
    help="Read workspace NAME's store in the cluster through its Portal "
    "(search, stellar, compare, plot).",
)
@click.option(
    "--portal",
    default=DEFAULT_PORTAL_URL,
    envvar=keys.ENV_PORTAL_URL,
    show_default=True,
    metavar="URL",
    help="The Portal serving --workspace (a port-forward to service/tau-portal).",
)
@click.pass_context
def experiment(ctx: click.Context, store: str, workspace: str, portal: str) -> None:
    if store and workspace:
        raise UsageError(
            "--store and --workspace name two different stores; pass one",
            owner="researcher",
        )
    ctx.meta["tau.store"] = store
    ctx.meta["tau.workspace"] = workspace
    ctx.meta["tau.portal"] = portal


# -- init / track / tag ------------------------------------------------------------------


@experiment.command(help="Create the store (if needed) and the experiment NAME.")
@click.argument("name")
@click.option("--project", default="", help="Project of the experiment (default: NAME).")
@click.option("--description", default="", help="Free text, e.g. the human experiment title.")
@click.option("--group", default="default", show_default=True, help="Default run group.")
@click.option("--idempotency-key", default="", help="Replays the stored result when repeated.")
@_output()
@click.pass_context
def init(
    ctx: click.Context,
    name: str,
    project: str,
    description: str,
    group: str,
    idempotency_key: str,
    output: str,
) -> None:
    from tau.evidence import init_experiment

    result = init_experiment(
        store_path(ctx),
        name,
        project=project,
        description=description,
        group=group,
        idempotency_key=idempotency_key,
    )
    if output in ("json", "yaml"):
        _document(result, output)
    else:
        print_table(
            ["experiment", "project", "group", "status", "store"],
            [
                [
                    result["experiment_id"],
                    result["project"],
                    result["group"],
                    result["status"],
                    result["store_path"],
                ]
            ],
        )


@experiment.command(help="Record run RUN: provenance, configs, artifacts, tags and scalar metrics.")
@click.argument("run")
@click.option("--project", default="")
@click.option("--group", default="")
@click.option("--experiment", "experiment_id", default="")
@click.option("--parent-run", default="")
@click.option(
    "--state", default="", help="pending, running, succeeded, failed, ... (default succeeded)"
)
@click.option("--owner", default="")
@click.option("--created-at", default="", help="RFC3339")
@click.option("--started-at", default="", help="RFC3339")
@click.option("--completed-at", default="", help="RFC3339")
@click.option("--config-hash", default="")
@click.option("--code-sha", default="")
@click.option("--image-digest", default="")
@click.option("--command", "tau_command", default="")
@click.option("--result-uri", default="")
@click.option(
    "--config",
    "configs",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Config file (repeatable).",
)
@click.option("--config-format", default="", type=click.Choice(["", "json", "yaml", "raw"]))
@click.option(
    "--artifact", "artifacts", multiple=True, help="URI, type:name=URI, name=URI or a JSON object."
)
@click.option("--runtime", default="")
@click.option("--dependencies", default="")
@click.option("--log-uri", default="")
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--metric", "metrics", multiple=True, help="NAME=VALUE (repeatable).")
@click.option("--step", type=int, default=None)
@click.option("--wall-time", default="", help="RFC3339 time of the metric points.")
@click.option("--metric-source", default="tau", show_default=True)
@click.option("--split", default="")
@click.option("--unit", default="")
@click.option("--idempotency-key", default="")
@click.option("--json", "as_json", is_flag=True, help="Same as -o json.")
@_output()
@click.pass_context
def track(ctx: click.Context, /, run: str, **opts: Any) -> None:
    from tau.evidence import RunRecord, TrackRequest, track_run

    metrics = {}
    for name, value in _kv(opts["metrics"], "--metric").items():
        try:
            metrics[name] = float(value)
        except ValueError:
            raise UsageError(
                f"--metric {name}={value!r}: value must be a number", owner="the user"
            ) from None
    context = {k: opts[k] for k in ("runtime", "dependencies", "log_uri") if opts[k]}
    record = RunRecord(
        run_id=run,
        project=opts["project"],
        experiment_id=opts["experiment_id"],
        run_group_id=opts["group"],
        parent_run_id=opts["parent_run"],
        state=opts["state"],
        owner=opts["owner"],
        created_at=opts["created_at"],
        started_at=opts["started_at"],
        completed_at=opts["completed_at"],
        config_hash=opts["config_hash"],
        code_sha=opts["code_sha"],
        image_digest=opts["image_digest"],
        tau_command=opts["tau_command"],
        result_uri=opts["result_uri"],
        context=context,
        tags=_kv(opts["tags"], "--tag"),
    )
    from tau.evidence.records import parse_artifact_spec

    request = TrackRequest(
        run=record,
        configs=[(Path(p), opts["config_format"]) for p in opts["configs"]],
        artifacts=[parse_artifact_spec(a) for a in opts["artifacts"]],
        metrics=metrics,
        step=opts["step"],
        wall_time=opts["wall_time"],
        metric_source=opts["metric_source"],
        split=opts["split"],
        unit=opts["unit"],
        idempotency_key=opts["idempotency_key"],
    )
    result = track_run(store_path(ctx), request)
    if opts["output"] in ("json", "yaml") or opts["as_json"]:
        _document(result, "json" if opts["as_json"] else opts["output"])
    else:
        print_table(
            ["run", "project", "state", "reused", "metric rows"],
            [
                [
                    result["run_id"],
                    result["project"],
                    result["state"],
                    result["reused"],
                    result.get("metric_rows", 0),
                ]
            ],
        )


@experiment.group(
    cls=AliasGroup, aliases={"list": "search"}, help="Experiment-level search and tagging."
)
def experiments() -> None:
    pass


@experiments.command("search", help="Search experiments (explicit and implicit per run group).")
@click.option("-q", "--query", "text", default="")
@click.option("--project", default="")
@_output()
@click.pass_context
def experiments_search(ctx: click.Context, text: str, project: str, output: str) -> None:
    from tau.evidence.query import experiment_index

    result = experiment_index(open_store(ctx), text, project)
    if output in ("json", "yaml"):
        _document(result, output)
    else:
        print_table(
            ["experiment", "project", "source", "runs", "groups", "description"],
            [
                [
                    e["experiment_id"],
                    e["project"],
                    e["source"],
                    e["run_count"],
                    ",".join(e["run_groups"]),
                    e["description"],
                ]
                for e in result["experiments"]
            ],
        )


@experiments.command("tag-run", help="Attach RUN to an experiment (created when missing).")
@click.argument("run")
@click.option("--experiment", "experiment_id", required=True)
@click.option("--name", default="")
@click.option("--description", default="")
@click.option("--idempotency-key", default="")
@_output()
@click.pass_context
def tag_run_cmd(
    ctx: click.Context,
    run: str,
    experiment_id: str,
    name: str,
    description: str,
    idempotency_key: str,
    output: str,
) -> None:
    from tau.evidence import tag_run

    result = tag_run(
        store_path(ctx),
        run,
        experiment_id=experiment_id,
        name=name,
        description=description,
        idempotency_key=idempotency_key,
    )
    if output in ("json", "yaml"):
        _document(result, output)
    else:
        print_table(["run", "experiment", "reused"], [[run, experiment_id, result["reused"]]])


# -- import ------------------------------------------------------------------------------


@experiment.group("import", help="Import metric history into the store.")
def import_group() -> None:
    pass


@import_group.command(
    "jsonl", help="Import W&B-style JSONL history (_step, _timestamp, scalars) for one run."
)
@click.option("--run", "run_id", required=True)
@click.option("--history", multiple=True, required=True, help="File or glob (repeatable).")
@click.option("--project", default="")
@click.option("--experiment", default="")
@click.option("--group", default="")
@click.option("--owner", default="", help="Owner when the run is new (default jsonl-import).")
@click.option("--state", default="succeeded", show_default=True)
@click.option("--metric-prefix", default="")
@click.option("--source", default="jsonl", show_default=True)
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--step-field", default="_step", show_default=True)
@click.option("--time-field", default="_timestamp", show_default=True)
@click.option("--idempotency-key", default="", help="Default: jsonl-<run>-<hash12> of the content.")
@click.option("--dry-run", is_flag=True, help="Parse and report; write nothing.")
@_output()
@click.pass_context
def import_jsonl_cmd(ctx: click.Context, /, **opts: Any) -> None:
    from tau.evidence import ImportRequest, import_jsonl

    request = ImportRequest(
        run_id=opts["run_id"],
        history=list(opts["history"]),
        project=opts["project"],
        experiment=opts["experiment"],
        group=opts["group"],
        owner=opts["owner"],
        state=opts["state"],
        metric_prefix=opts["metric_prefix"],
        source=opts["source"],
        tags=_kv(opts["tags"], "--tag"),
        step_field=opts["step_field"],
        time_field=opts["time_field"],
        idempotency_key=opts["idempotency_key"],
        dry_run=opts["dry_run"],
    )
    result = import_jsonl(store_path(ctx), request)
    if opts["output"] in ("json", "yaml"):
        _document(result, opts["output"])
    else:
        status = "dry-run" if result["dry_run"] else ("reused" if result["reused"] else "imported")
        print_table(
            ["run", "rows", "metrics", "status", "file"],
            [
                [
                    result["run_id"],
                    result["rows"],
                    len(result["metrics"]),
                    status,
                    result["metric_file"],
                ]
            ],
        )


# -- read side ---------------------------------------------------------------------------


@experiment.command("list", help="List runs, run groups or experiments.")
@click.option(
    "--kind",
    type=click.Choice(["runs", "groups", "experiments"]),
    default="runs",
    show_default=True,
)
@click.option("--project", default="")
@click.option("--group", default="")
@click.option("--state", default="")
@click.option("--tag", "tags", multiple=True)
@_output()
@click.pass_context
def list_cmd(
    ctx: click.Context,
    kind: str,
    project: str,
    group: str,
    state: str,
    tags: tuple[str, ...],
    output: str,
) -> None:
    from tau.evidence.query import list_records

    rows = list_records(
        open_store(ctx), kind, project=project, group=group, state=state, tags=_kv(tags, "--tag")
    )
    if output in ("json", "yaml"):
        _document({"kind": kind, "count": len(rows), "items": rows}, output)
    elif kind == "runs":
        print_table(
            ["run", "group", "experiment", "state", "lifecycle", "created"],
            [
                [
                    r["run_id"],
                    r["run_group_id"],
                    r["experiment_id"],
                    r["state"],
                    r["lifecycle"],
                    r["created_at"],
                ]
                for r in rows
            ],
        )
    else:
        key = "run_group_id" if kind == "groups" else "experiment_id"
        print_table(
            [kind[:-1], "project", "runs", "created"],
            [[r[key], r["project"], r["runs"], r["created_at"]] for r in rows],
        )


SEARCH_FORMATS = click.Choice(["table", "json", "yaml", "jsonl", "csv"], case_sensitive=False)
SEARCH_COLUMNS = (
    "run_id",
    "project",
    "run_group_id",
    "experiment_id",
    "state",
    "lifecycle",
    "max_step",
    "created_at",
)


@experiment.command(help="Search runs by text, fields, tags, lifecycle and metric summaries.")
@click.option(
    "-q", "--query", "text", default="", help="Matches ids, names, tags and metric names."
)
@click.option("--target", default="", help="A run, run group or experiment id.")
@click.option("--project", default="")
@click.option("--group", default="")
@click.option("--experiment", default="")
@click.option("--state", default="")
@click.option("--lifecycle", default="", help="pending, running, failed, succeeded or incomplete.")
@click.option("--tag", "tags", multiple=True)
@click.option("--metric-name", default="")
@click.option(
    "--metric-filter",
    "metric_filters",
    multiple=True,
    help="NAME[@FIELD] OP NUMBER, e.g. 'loss<0.5' or 'accuracy@max>=0.9'.",
)
@click.option("--since", default="", help="RFC3339, a duration like 36h, or Nd.")
@click.option("--min-step", type=int, default=None)
@click.option("--limit", type=int, default=200, show_default=True, help="At most 1000.")
@_output(SEARCH_FORMATS)
@click.pass_context
def search(
    ctx: click.Context,
    text: str,
    target: str,
    project: str,
    group: str,
    experiment: str,
    state: str,
    lifecycle: str,
    tags: tuple[str, ...],
    metric_name: str,
    metric_filters: tuple[str, ...],
    since: str,
    min_step: int | None,
    limit: int,
    output: str,
) -> None:
    from tau.evidence.query import RunQuery, parse_metric_filter, search_runs

    q = RunQuery(
        query=text,
        target=target,
        project=project,
        group=group,
        experiment=experiment,
        state=state,
        lifecycle=lifecycle,
        tags=_kv(tags, "--tag"),
        metric_name=metric_name,
        metric_filters=[parse_metric_filter(f) for f in metric_filters],
        since=since,
        min_step=min_step,
        limit=limit,
    )
    portal = portal_source(ctx)
    if portal is not None:
        result = portal.search(
            query=text,
            target=target,
            project=project,
            group=group,
            experiment=experiment,
            state=state,
            lifecycle=lifecycle,
            tags=tags,
            metric_name=metric_name,
            metric_filters=metric_filters,
            since=since,
            min_step=min_step,
            limit=limit,
        )
    else:
        result = search_runs(open_store(ctx), q)
    runs = result["runs"]
    if output in ("json", "yaml"):
        _document(result, output)
    elif output == "jsonl":
        for run in runs:
            sys.stdout.write(json.dumps(run, sort_keys=True, default=str) + "\n")
    elif output == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow([*SEARCH_COLUMNS, "metrics"])
        for run in runs:
            latest = ";".join(f"{k}={_fmt(v['latest'])}" for k, v in run["metrics"].items())
            writer.writerow([_fmt(run[c]) for c in SEARCH_COLUMNS] + [latest])
    else:
        print_table(
            ["run", "group", "experiment", "state", "lifecycle", "max step", "metrics"],
            [
                [
                    r["run_id"],
                    r["run_group_id"],
                    r["experiment_id"],
                    r["state"],
                    r["lifecycle"],
                    _fmt(r["max_step"]),
                    " ".join(f"{k}={_fmt(v['latest'])}" for k, v in r["metrics"].items()),
                ]
                for r in runs
            ],
        )


@experiment.command(help="Counts for a run group, run or experiment (resolved in that order).")
@click.argument("name")
@_output()
@click.pass_context
def status(ctx: click.Context, name: str, output: str) -> None:
    from tau.evidence.query import status as status_of

    result = status_of(open_store(ctx), name)
    if output in ("json", "yaml"):
        _document(result, output)
    else:
        rows = [[k, json.dumps(v) if isinstance(v, dict) else _fmt(v)] for k, v in result.items()]
        print_table(["field", "value"], rows)


SQL_FORMATS = click.Choice(["table", "json", "yaml", "csv"], case_sensitive=False)


@experiment.command(help="Run one read-only SELECT/WITH query against index.sqlite.")
@click.argument("query")
@click.option("--format", "-o", "fmt", type=SQL_FORMATS, default="table", show_default=True)
@click.pass_context
def sql(ctx: click.Context, query: str, fmt: str) -> None:
    from tau.evidence.query import run_sql

    result = run_sql(open_store(ctx), query)
    if fmt in ("json", "yaml"):
        _document([dict(zip(result["columns"], row, strict=True)) for row in result["rows"]], fmt)
    elif fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(result["columns"])
        writer.writerows(result["rows"])
    else:
        print_table(result["columns"], result["rows"])


# -- dashboards --------------------------------------------------------------------------


def _snapshot(ctx: click.Context, target: str, metrics: tuple[str, ...], points: int) -> Any:
    from tau.portal import snapshot

    portal = portal_source(ctx)
    if portal is not None:
        return portal.snapshot(target, list(metrics), points)
    return snapshot.build_snapshot(
        open_store(ctx), target, metrics=list(metrics) or None, max_points=points
    )


@experiment.command(help="The Stellar dashboard of a run group, run or experiment.")
@click.argument("name")
@click.option(
    "-o",
    "--output",
    type=click.Choice(["html", "json", "tui"], case_sensitive=False),
    default="html",
    show_default=True,
)
@click.option(
    "--out",
    default="",
    help="File to write (html default: <NAME>.stellar.html; json default: stdout).",
)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    help="Metrics to chart (default: all, loss/accuracy first).",
)
@click.option(
    "--max-points",
    type=int,
    default=2000,
    show_default=True,
    help="Points per line after LTTB downsampling (stored data is untouched).",
)
@click.pass_context
def stellar(
    ctx: click.Context, name: str, output: str, out: str, metrics: tuple[str, ...], max_points: int
) -> None:
    from tau.evidence import atomic
    from tau.portal import html, tui

    if output == "tui" and out:
        raise UsageError("--out writes html or json; -o tui prints to the terminal")
    snap = _snapshot(ctx, name, metrics, max(3, max_points))
    if output == "tui":
        tui.render(snap)
        return
    if output == "json":
        text = dump_json(snap) + "\n"
        if not out:
            sys.stdout.write(text)
            return
        atomic.write_text(Path(out), text)
    else:
        out = out or f"{name}.stellar.html"
        atomic.write_text(Path(out), html.render_file(snap))
    click.echo(
        f"wrote {out} ({len(snap['runs'])} run(s), {len(snap['metrics'])} metric chart(s))",
        err=True,
    )


@experiment.command(help="Per-group statistics of each run's latest value, best run and winner.")
@click.argument("target")
@click.option("--metric", "metrics", multiple=True)
@click.option(
    "--direction", default="", help="max or min (default: min for loss-like names, else max)."
)
@click.option("--format", "-o", "fmt", type=SQL_FORMATS, default="table", show_default=True)
@click.pass_context
def compare(
    ctx: click.Context, target: str, metrics: tuple[str, ...], direction: str, fmt: str
) -> None:
    from tau.portal.compare import compare as compare_runs

    portal = portal_source(ctx)
    if portal is not None:
        rows = portal.compare(target, list(metrics), direction)
    else:
        rows = compare_runs(open_store(ctx), target, list(metrics), direction)
    columns = [
        "metric_name",
        "direction",
        "run_group_id",
        "run_count",
        "latest_step",
        "min",
        "p25",
        "median",
        "p75",
        "max",
        "best_value",
        "best_run_id",
        "winner",
    ]
    if fmt in ("json", "yaml"):
        _document(rows, fmt)
    elif fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(columns)
        writer.writerows([[_fmt(r[c]) for c in columns] for r in rows])
        sys.stdout.write(buffer.getvalue())
    else:
        print_table(columns, [[_fmt(r[c]) for c in columns] for r in rows])


@experiment.command(help="Write an SVG chart (one panel per metric, one line per run).")
@click.argument("target")
@click.option("--out", required=True, help="SVG file to write.")
@click.option("--metric", "metrics", multiple=True)
@click.pass_context
def plot(ctx: click.Context, target: str, out: str, metrics: tuple[str, ...]) -> None:
    from tau.evidence import atomic
    from tau.portal import plot as plotting

    snap = _snapshot(ctx, target, metrics, 600)
    atomic.write_text(Path(out), plotting.render_svg(snap))
    click.echo(f"wrote {out}", err=True)


@experiment.command(
    help="Copy the store packet (manifest, index, append-log, metrics, artifacts) to --out."
)
@click.option("--out", required=True, help="Destination directory (outside the store).")
@click.option("--force", is_flag=True, help="Allow a non-empty destination.")
@_output()
@click.pass_context
def export(ctx: click.Context, out: str, force: bool, output: str) -> None:
    from tau.evidence.export import export_packet

    result = export_packet(open_store(ctx), Path(out), force=force)
    if output in ("json", "yaml"):
        _document(result, output)
    else:
        print_table(["out", "files", "bytes"], [[result["out"], result["files"], result["bytes"]]])


# -- server ------------------------------------------------------------------------------


def _server_config(
    ctx: click.Context,
    default_target: str,
    metrics: tuple[str, ...],
    workspace: str,
    max_runs: int,
    addr: str,
    allow_hosts: tuple[str, ...],
) -> Any:
    from tau.portal.server import ServerConfig, allowed_hosts

    hosts = allowed_hosts(addr, allow_hosts)
    return ServerConfig(
        store=open_store(ctx),
        workspace=workspace,
        default_target=default_target,
        metrics=tuple(metrics),
        max_runs=max_runs,
        allowed_hosts=hosts,
    )


def _listen(addr: str, target: str, metric: str) -> tuple[Any, str, str]:
    """Bind, then describe the real address: (socket, browser URL, the address it listens on)."""
    from tau.portal import server

    sock = server.listen(addr)
    bound = server.bound_address(sock)
    warning = server.exposure_warning(bound)
    if warning:
        click.echo(warning, err=True)
    return sock, server.stellar_url(str(bound), target, metric), str(bound)


_ALLOW_HOST = click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="A Host name (besides IP addresses and localhost) the server answers to; repeatable.",
)


@experiment.command(help="Serve Stellar locally: run/experiment pages and the series API.")
@click.option("--addr", default="127.0.0.1:8080", show_default=True, help="HOST:PORT to bind.")
@click.option("--default-target", default="")
@click.option(
    "--open", "open_browser", is_flag=True, help="Open the browser on the default target."
)
@click.option("--metric", "metrics", multiple=True)
@click.option("--workspace", default="default", show_default=True)
@click.option("--max-runs", type=int, default=200, show_default=True)
@_ALLOW_HOST
@click.pass_context
def serve(
    ctx: click.Context,
    addr: str,
    default_target: str,
    open_browser: bool,
    metrics: tuple[str, ...],
    workspace: str,
    max_runs: int,
    allow_hosts: tuple[str, ...],
) -> None:
    from tau.portal import server

    config = _server_config(ctx, default_target, metrics, workspace, max_runs, addr, allow_hosts)
    sock, url, bound = _listen(addr, default_target, metrics[0] if metrics else "")
    click.echo(
        f"Stellar serving {config.store.root} on {bound} at {url} (Ctrl-C to stop)", err=True
    )
    if open_browser:
        _open_later(url)
    server.serve(config, sock)


@experiment.command("open", help="Serve Stellar and open TARGET in the browser.")
@click.argument("target")
@click.option("--addr", default="127.0.0.1:8080", show_default=True)
@click.option("--metric", default="", help="Primary metric (default: inferred from the target).")
@_ALLOW_HOST
@click.pass_context
def open_cmd(
    ctx: click.Context, target: str, addr: str, metric: str, allow_hosts: tuple[str, ...]
) -> None:
    from tau.evidence.query import metric_names
    from tau.portal import server
    from tau.portal.snapshot import primary_metrics

    config = _server_config(
        ctx, target, (metric,) if metric else (), "default", 200, addr, allow_hosts
    )
    metric = metric or (primary_metrics(metric_names(config.store, target)) or [""])[0]
    sock, url, bound = _listen(addr, target, metric)
    click.echo(f"Stellar on {bound}: {url} (Ctrl-C to stop)", err=True)
    _open_later(url)
    server.serve(config, sock)


def _open_later(url: str) -> None:
    import threading
    import webbrowser

    threading.Timer(1.0, webbrowser.open, args=(url,)).start()

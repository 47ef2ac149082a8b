"""Local-engine halves of `tau run` and its lifecycle verbs: flags -> `tau.engine` -> print.

Routing is explicit: `--local`, or a NAME that is a local run record. A cluster problem is
never answered by running or reading something local instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import typer

from tau.errors import RuntimeFailure, UsageError

LOCAL = typer.Option(
    False, "--local", help="A run of the local engine (implied when NAME is a local run)."
)
LIST_LOCAL = typer.Option(False, "--local", help="List the local engine's runs on this machine.")


def _say(text: str) -> None:
    click.echo(text, err=True)


def _out(text: str) -> None:
    click.echo(text)


def _supervising(*, err: bool) -> Callable[[str], None]:
    """Output of a supervising `tau run --local`: a reader that went away (`| head`, a
    closed terminal) must not kill the supervisor mid-run. The run goes on and its log
    file keeps every line, so the rest of the terminal output goes to devnull."""

    def echo(text: str) -> None:
        try:
            click.echo(text, err=err)
        except OSError:  # EPIPE from a closed pipe, EIO from a hung-up terminal
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, (sys.stderr if err else sys.stdout).fileno())
            os.close(devnull)

    return echo


def routes(name: str | None, local: bool) -> bool:
    """True when NAME is a local run (or --local was given)."""
    if local:
        return True
    from tau.engine import records

    return bool(name and records.exists(name))


def run(loaded: Any, *, data_root: str, store: str = "") -> None:
    from tau.engine.launch import start
    from tau.run.plan import local_resolver

    argv = ("tau", *sys.argv[1:])
    record = start(
        loaded,
        local_resolver(loaded, argv),
        data_root=Path(data_root) if data_root else None,
        store=Path(store) if store else None,
        argv=argv,
        echo=_supervising(err=True),
        stream=_supervising(err=False),
    )
    _finish(record)


def _finish(record: Any) -> None:
    from tau.engine import records

    say = _supervising(err=True)

    started = record.started_at or record.created_at
    say(f"local run {record.name} {record.state} ({_elapsed(started, record.finished_at)})")
    say(f"status:   tau run status {record.name}")
    say(f"logs:     tau logs {record.name}")
    say(f"outputs:  tau run get {record.name}  ({record.output_dir})")
    evidence = record.evidence or {}
    if evidence.get("run_id"):
        say(f"evidence: run {evidence['run_id']} in experiment store {record.store}")
        target = record.experiment.get("name") or evidence["run_id"]
        say(f"          taugrid-portal experiment --store {record.store} stellar {target}")
    if record.state == records.CANCELLED:
        raise click.exceptions.Exit(130)
    if record.state == records.FAILED:
        raise RuntimeFailure(
            f"local run {record.name} failed ({record.reason}): {record.message}",
            hint=f"tau logs {record.name} --tail 200",
        )


def _elapsed(start: str, end: str) -> str:
    from datetime import datetime

    if not start or not end:
        return "not started"
    seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    return f"{seconds:.1f}s"


def status(name: str, output: str, *, watch: bool = False) -> None:
    if watch:
        raise UsageError("--watch is for cluster runs; follow a local run with `tau logs NAME -f`")
    from tau.cli.output import dump_json
    from tau.engine import records
    from tau.engine.status import document

    doc = document(records.require(name))
    if output == "json":
        sys.stdout.write(dump_json(doc) + "\n")
        return
    from rich.console import Console

    from tau.lifecycle.status import render

    render(doc, Console(highlight=False, soft_wrap=True))


def logs(name: str, opts: Any) -> None:
    """A local run has one log per attempt: pod/container flags are refused, not ignored."""
    from tau.engine import logs as engine_logs

    given = [
        flag
        for flag, value in (
            ("-c/--container", opts.container),
            ("--all-containers", opts.all_containers),
            ("--previous", opts.previous),
            ("--timestamps", opts.timestamps),
            ("--prefix", opts.prefix),
        )
        if value
    ]
    if given:
        raise UsageError(
            f"{', '.join(given)}: {name} is a local run with one log per attempt, no pods",
            hint="use --tail and -f",
        )
    engine_logs.stream(name, tail=opts.tail, follow=opts.follow, out=_out)


def cancel(name: str) -> None:
    from tau.engine.control import cancel as cancel_run

    cancel_run(name, echo=_say)


def get(name: str, *, artifact: str, output: str) -> None:
    from tau.cli.output import dump_json
    from tau.engine import outputs, records

    run = records.require(name)
    if artifact:
        path = outputs.artifact(run, artifact)
        if output == "raw":
            sys.stdout.buffer.write(path.read_bytes())
            return
        _out(f"PATH: {path}")
        _out("PVC: (local data root)")
        _out("---")
        sys.stdout.write(path.read_text(errors="replace"))
        return
    found = outputs.listing(run)
    if output == "json":
        data: dict[str, Any] = {"path": str(found.path), "pvc": "", "entries": found.entries}
        if found.published is not None:
            data["published"] = found.published
        _out(dump_json(data))
        return
    _out(f"PATH: {found.path}")
    _out("PVC: (local data root)")
    _out("(directory)")
    if found.published is False:
        _out("results are not (yet) published: no completion marker for this publication")
    _out("ENTRIES:" if found.entries else "(empty)")
    for entry in found.entries:
        _out(f"  {entry}")
    if found.entries:
        _out(f"Fetch one file with: tau run get {name} --artifact <NAME>")


def list_(output: str) -> None:
    from tau.cli.output import dump_json, print_table
    from tau.engine import records
    from tau.engine.status import display_state

    runs, broken = records.all_runs()
    for error in broken:
        _say(f"warning: {error.one_line()}")
    rows = [
        {
            "name": r.name,
            "kind": r.kind,
            "status": display_state(r),
            "created": r.created_at,
            "age": _age(r.created_at),
            "namespace": "local",
            "source": "local",
            "executionTarget": "local",
            "experimentPath": r.store,
        }
        for r in runs
    ]
    if output == "json":
        _out(dump_json({"namespace": "local", "total": len(rows), "runs": rows}))
        return
    if not rows:
        _out("No local runs found")
        return
    print_table(
        ["NAME", "KIND", "STATUS", "AGE", "SOURCE"],
        [[r["name"], r["kind"], r["status"], r["age"], "local"] for r in rows],
    )


def history(name: str, output: str) -> None:
    from tau.cli.output import dump_json, print_table
    from tau.engine import records
    from tau.engine.status import history as build

    data = build(records.require(name))
    if output == "json":
        _out(dump_json(data))
        return
    _out(f"Run: local/{name}")
    _out(f"State: {data['displayState']} (attempt {data['attempt']})")
    if data["entries"]:
        rows = [[e["time"], e["event"], e["attempt"], e["failure"]] for e in data["entries"]]
        print_table(["TIME", "EVENT", "ATTEMPT", "FAILURE"], rows)
    else:
        _out("No retries or resumes recorded.")


def _age(created: str) -> str:
    from datetime import UTC, datetime

    try:
        seconds = (datetime.now(UTC) - datetime.fromisoformat(created)).total_seconds()
    except ValueError:
        return "<unknown>"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def resume(name: str, *, config: str, checkpoint: str, force: bool) -> None:
    from tau.engine import records
    from tau.engine.launch import resume as resume_run
    from tau.run.plan import local_resolver
    from tau.runconfig import load

    records.require(name)
    path = Path(config)
    if not path.is_file():
        raise UsageError(f"--config {path} does not exist", hint="pass the run's tau.yaml")
    loaded = load(path)
    argv = ("tau", *sys.argv[1:])
    record = resume_run(
        name,
        loaded,
        local_resolver(loaded, argv),
        checkpoint=checkpoint,
        force=force,
        argv=argv,
        echo=_supervising(err=True),
        stream=_supervising(err=False),
    )
    _finish(record)

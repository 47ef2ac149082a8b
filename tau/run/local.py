"""The local backend: a run's verbs on this machine, through `tau.engine`.

Cluster-only options are refused, not ignored: a local run has one log per attempt and no
pods, no watch, and nothing to dry-run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tau.errors import RuntimeFailure, UsageError
from tau.run.backend import (
    CancelRequest,
    GetRequest,
    ListRequest,
    ResumeRequest,
    StatusRequest,
    Terminal,
    structured,
)

if TYPE_CHECKING:
    from tau.engine.records import LocalRun
    from tau.lifecycle.logs import LogOptions
    from tau.run.plan import RunPlan


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


def _argv() -> tuple[str, ...]:
    return ("tau", *sys.argv[1:])


class LocalBackend:
    def __init__(self, *, data_root: str = "", store: str = "") -> None:
        self.data_root = data_root
        self.store = store

    def submit(self, plan: RunPlan, terminal: Terminal, *, output: str = "") -> None:
        """Start the plan's resolution; only when another run of the same config, started
        in the same second, claimed its name first is the run planned again (a new name)."""
        from tau.engine.launch import NameTaken, start
        from tau.resolve.direct import Resolution
        from tau.run.plan import Mode
        from tau.run.plan import plan as replan

        while True:
            resolution = plan.resolution
            assert isinstance(resolution, Resolution)  # a local plan refuses managed configs
            try:
                record = start(
                    plan.loaded,
                    resolution,
                    data_root=Path(self.data_root) if self.data_root else None,
                    store=Path(self.store) if self.store else None,
                    argv=_argv(),
                    echo=_supervising(err=True),
                    stream=_supervising(err=False),
                )
            except NameTaken:
                plan = replan(plan.loaded, plan.overrides, Mode.LOCAL, argv=_argv())
                continue
            _finish(record)
            return

    def status(self, request: StatusRequest, terminal: Terminal) -> None:
        if request.watch:
            raise UsageError(
                "--watch is for cluster runs; follow a local run with `tau logs NAME -f`"
            )
        from tau.engine import records
        from tau.engine.status import document

        doc = document(records.require(request.name))
        if structured(request.output):
            terminal.document(doc)
        else:
            terminal.status(doc)

    def list(self, request: ListRequest, terminal: Terminal) -> None:
        from tau.engine import records
        from tau.engine.status import display_state

        runs, broken = records.all_runs()
        for error in broken:
            terminal.err(f"warning: {error.one_line()}")
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
        if structured(request.output):
            terminal.document({"namespace": "local", "total": len(rows), "runs": rows})
            return
        if not rows:
            terminal.out("No local runs found")
            return
        terminal.table(
            ["NAME", "KIND", "STATUS", "AGE", "SOURCE"],
            [[r["name"], r["kind"], r["status"], r["age"], "local"] for r in rows],
        )

    def logs(
        self, name: str, options: LogOptions, terminal: Terminal, *, discover: bool = False
    ) -> None:
        """A local run has one log per attempt: pod/container flags are refused, not ignored.
        It is found by its name alone, so `discover` changes nothing."""
        from tau.engine import logs as engine_logs

        given = [
            flag
            for flag, value in (
                ("-c/--container", options.container),
                ("--all-containers", options.all_containers),
                ("--previous", options.previous),
                ("--timestamps", options.timestamps),
                ("--prefix", options.prefix),
                ("--kusto-*", options.offload.given()),
            )
            if value
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)}: {name} is a local run with one log per attempt, no pods",
                hint="use --tail and -f",
            )
        engine_logs.stream(name, tail=options.tail, follow=options.follow, out=terminal.out)

    def cancel(self, request: CancelRequest, terminal: Terminal) -> None:
        from tau.engine.control import cancel

        cancel(request.name, echo=terminal.err)

    def get(self, request: GetRequest, terminal: Terminal) -> None:
        from tau.engine import outputs, records

        run = records.require(request.name)
        if request.artifact:
            path = outputs.artifact(run, request.artifact)
            if request.output == "raw":
                sys.stdout.buffer.write(path.read_bytes())
                return
            if structured(request.output):
                content = path.read_text(errors="replace")
                terminal.document(
                    {"path": str(path), "pvc": "", "directory": False, "content": content}
                )
                return
            terminal.out(f"PATH: {path}")
            terminal.out("PVC: (local data root)")
            terminal.out("---")
            sys.stdout.write(path.read_text(errors="replace"))
            return
        found = outputs.listing(run)
        if structured(request.output):
            data: dict[str, object] = {"path": str(found.path), "pvc": "", "entries": found.entries}
            if found.published is not None:
                data["published"] = found.published
            terminal.document(data)
            return
        terminal.out(f"PATH: {found.path}")
        terminal.out("PVC: (local data root)")
        terminal.out("(directory)")
        if found.published is False:
            terminal.out(
                "results are not (yet) published: no completion marker for this publication"
            )
        terminal.out("ENTRIES:" if found.entries else "(empty)")
        for entry in found.entries:
            terminal.out(f"  {entry}")
        if found.entries:
            terminal.out(f"Fetch one file with: tau run get {request.name} --artifact <NAME>")

    def history(self, name: str, output: str, terminal: Terminal) -> None:
        from tau.engine import records
        from tau.engine.status import history as build

        data = build(records.require(name))
        if structured(output):
            terminal.document(data)
            return
        terminal.out(f"Run: local/{name}")
        terminal.out(f"State: {data['displayState']} (attempt {data['attempt']})")
        terminal.history(data["entries"])

    def resume(self, request: ResumeRequest, terminal: Terminal) -> None:
        if request.dry_run:
            raise UsageError("--dry-run applies to cluster runs; a local resume runs at once")
        from tau.engine import records
        from tau.engine.launch import resume
        from tau.run.plan import local_resolver
        from tau.runconfig import load

        records.require(request.name)
        path = Path(request.config)
        if not path.is_file():
            raise UsageError(f"--config {path} does not exist", hint="pass the run's tau.yaml")
        loaded = load(path)
        record = resume(
            request.name,
            loaded,
            local_resolver(loaded, _argv()),
            checkpoint=request.checkpoint,
            force=request.force,
            argv=_argv(),
            echo=_supervising(err=True),
            stream=_supervising(err=False),
        )
        _finish(record)


def _finish(record: LocalRun) -> None:
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

"""The cluster backend: a run's verbs against the workspace's cluster, through
`tau.lifecycle` and `tau.kube`.

The route (`--context`, `-n`, `--workspace`) is resolved once per verb into a lifecycle
`Target`; submissions take the planner's live `RunPlan` and never re-resolve.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from tau.errors import RuntimeFailure, UsageError
from tau.run.backend import (
    CancelRequest,
    GetRequest,
    ListRequest,
    ResumeRequest,
    Route,
    StatusRequest,
    Terminal,
    structured,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from tau.connection import Target
    from tau.kube import ObjectReader
    from tau.kube.informer import WatchedReads
    from tau.lifecycle.logs import LogOptions
    from tau.lifecycle.snapshot import Snapshot
    from tau.run.plan import RunPlan


def _argv() -> tuple[str, ...]:
    return ("tau", *sys.argv[1:])


class ClusterBackend:
    def __init__(self, route: Route) -> None:
        self.route = route

    def target(self) -> Target:
        from tau.connection import resolve_target

        route = self.route
        return resolve_target(
            context=route.context,
            namespace=route.namespace,
            workspace=route.workspace,
            project=route.project,
        )

    def submit(self, plan: RunPlan, terminal: Terminal, *, output: str = "") -> None:
        """Create the workload (or server-validate it). `output` (yaml|json) prints a server
        dry run's objects as the API server returned them; without it a dry run prints one
        line per object."""
        from tau.lifecycle.retry import run_retries
        from tau.lifecycle.submit import next_steps, profile_note, server_dry_run, submit
        from tau.render import redact_secrets
        from tau.run.failures import policy_from

        prepared = plan.connection()
        if plan.overrides.dry_run == "server":
            warnings: list[str] = []
            answered = server_dry_run(prepared, warnings)
            _pass_on(warnings, terminal)
            if output:
                from tau.run.manifests import dump

                sys.stdout.write(dump(redact_secrets(answered), output))
                return
            for obj in answered:
                group = obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""
                kind = obj["kind"].lower() + (f".{group}" if group else "")
                terminal.out(f"{kind}/{obj['metadata']['name']} created (server dry run)")
            return
        submitted = submit(prepared)
        _pass_on(submitted.warnings, terminal)
        verb = "recovered (same submission)" if submitted.reused else "submitted"
        terminal.out(f"{submitted.kind} {submitted.namespace}/{submitted.name} {verb}")
        terminal.out(f"Run name: {submitted.name}")
        terminal.out("Next:")
        for line in next_steps(submitted, prepared.target):
            terminal.out(f"  {line}")
        note = profile_note(submitted)
        if note:
            terminal.out(note)
        policy = policy_from(plan.loaded.config, prepared.name)
        if policy is not None:
            run_retries(prepared, policy, say=terminal.err, wait=terminal.countdown)

    def status(self, request: StatusRequest, terminal: Terminal) -> None:
        from tau.lifecycle import status as st
        from tau.lifecycle.snapshot import collect

        name = request.name
        target = self.target()
        kube = target.client()

        def fetch(reads: ObjectReader = kube) -> tuple[Snapshot, dict[str, object]]:
            snap = collect(reads, target.namespace, name)
            profile = None
            if request.run_profile:
                from tau.lifecycle.profile import run_profile as read_profile

                profile = read_profile(kube, snap)
            return snap, st.document(snap, target, profile=profile)

        if not request.watch:
            snap, doc = fetch()
            if structured(request.output):
                terminal.document(doc)
            else:
                terminal.status(doc)
                if request.diagnostic_hints:
                    terminal.out("\nDeep diagnostics (kubectl escape hatches):")
                    for line in st.diagnostic_hints(snap, target):
                        terminal.out(f"  {line}")
            if not snap.found:
                raise RuntimeFailure(
                    f'no Job or RayJob "{name}" found in namespace "{target.namespace}"',
                    hint="list runs with `tau run list`",
                    owner="researcher: run name or namespace",
                )
            return
        from tau.kube.informer import WatchedReads

        # Every read of the snapshot is a LIST once and then a WATCH: a refresh re-collects
        # from memory, right after a change or when --interval passes without one.
        reads = WatchedReads(kube)
        try:
            self._watch(request, terminal, target, lambda: fetch(reads), reads)
        finally:
            reads.stop()

    def _watch(
        self,
        request: StatusRequest,
        terminal: Terminal,
        target: Target,
        fetch: Callable[[], tuple[Snapshot, dict[str, object]]],
        reads: WatchedReads,
    ) -> None:
        from tau.lifecycle import phases as ph

        name = request.name
        iteration = 0
        while True:
            iteration += 1
            snap, doc = fetch()
            reads.changed.clear()
            if sys.stdout.isatty():
                sys.stdout.write("\x1b[H\x1b[2J")
            terminal.out(f"watching {target.namespace}/{name} every {request.interval}\n")
            terminal.status(doc)
            phases = ph.build(snap)
            if ph.watch_failed(snap):
                failure = doc.get("failure")
                cause: dict[str, str] = failure if isinstance(failure, dict) else {}
                raise RuntimeFailure(
                    f"startup phase failed for {target.namespace}/{name}"
                    + (f" ({cause['reason']}: {cause['category']})" if cause else ""),
                    hint=f"see `tau run status {name} --diagnostic-hints`",
                    owner=cause.get("owner")
                    or next((p.owner for p in phases if p.status == ph.WARNING and p.owner), ""),
                )
            if ph.watch_complete(snap, phases):
                return
            if request.max_iterations and iteration >= request.max_iterations:
                return
            reads.changed.wait(request.seconds)

    def list(self, request: ListRequest, terminal: Terminal) -> None:
        from tau.lifecycle.runs import list_runs

        target = self.target()
        data = list_runs(
            target.client(),
            target.namespace,
            queue=request.queue,
            include_external=request.include_external,
        )
        if structured(request.output):
            terminal.document(data)
            return
        terminal.out("History: live-only")
        if not data["runs"]:
            terminal.out(f'No jobs found in namespace "{target.namespace}"')
            return
        external = request.include_external
        columns = ["NAME", "KIND", "STATUS", "AGE"] + (["SOURCE"] if external else [])
        rows = [
            [r["name"], r["kind"], r["status"], r["age"]] + ([r["source"]] if external else [])
            for r in data["runs"]
        ]
        terminal.table(columns, rows)

    def logs(
        self, name: str, options: LogOptions, terminal: Terminal, *, discover: bool = False
    ) -> None:
        """`discover` (`tau logs`): with no route flags, search the connected workspace, then
        the workspace connections cached on this machine."""
        from tau.lifecycle.logs import streams, write_logs

        if not discover:
            target = self.target()
        else:
            try:
                target = self._discover(name)
            except RuntimeFailure:
                # A RayJob KubeRay removed is found nowhere; its lines may still be offloaded.
                if not options.offload.given():
                    raise
                target = self.target()
        sources = streams(target.client(), target.namespace, name, options, note=terminal.err)
        write_logs(sources, options, terminal.out)

    def _discover(self, name: str) -> Target:
        from tau.connection import cached_targets
        from tau.lifecycle.logs import discover

        route = self.route
        if route.context or route.namespace or route.workspace:
            target = self.target()
        else:
            try:
                current = self.target()
            except UsageError:
                current = None
            if current is not None and current.source == "kubeconfig":
                cached = cached_targets()
                target = discover(name, current, cached) if cached else current
            else:
                target = discover(name, current, cached_targets())
        return target

    def cancel(self, request: CancelRequest, terminal: Terminal) -> None:
        from tau.lifecycle.runs import cancel

        target = self.target()
        cancel(
            target.client(),
            target.namespace,
            request.name,
            wait=request.wait,
            teardown_timeout=request.teardown_timeout,
            interval=request.interval,
            timeout=request.timeout,
            say=terminal.out,
        )

    def get(self, request: GetRequest, terminal: Terminal) -> None:
        from tau.lifecycle.artifacts import fetch
        from tau.run.results import inside

        if request.artifact:
            inside("/", request.artifact)  # reject escapes before touching the cluster
        target = self.target()
        result = fetch(
            target.client(),
            target.namespace,
            request.name,
            artifact=request.artifact,
            path=request.path,
            pvc=request.pvc,
        )
        if structured(request.output):
            terminal.document(result)
            return
        if request.output == "raw":
            if result["directory"]:
                raise UsageError("-o raw prints one file; pick it with --artifact")
            sys.stdout.write(result["content"])
            return
        terminal.out(f"PATH: {result['path']}")
        terminal.out(f"PVC: {result['pvc']}")
        if not result["directory"]:
            terminal.out("---")
            terminal.out(result["content"])
            return
        terminal.out("(directory)")
        terminal.out("ENTRIES:" if result["entries"] else "(empty)")
        for entry in result["entries"]:
            terminal.out(f"  {entry}")
        if result.get("checkpoint"):
            terminal.out(f"checkpoint: {result['checkpoint']}")
        terminal.out(f"Fetch one file with: tau run get {request.name} --artifact <NAME>")

    def history(self, name: str, output: str, terminal: Terminal) -> None:
        from tau.kube.resources import EVENTS
        from tau.lifecycle.history import history as build
        from tau.lifecycle.snapshot import collect

        target = self.target()
        kube = target.client()
        snap = collect(kube, target.namespace, name)
        data = build(snap, kube.list(EVENTS, target.namespace))
        if structured(output):
            terminal.document(data)
            return
        if not data["found"] and not data["entries"]:
            raise RuntimeFailure(
                f'no Job, RayJob or retry history for "{name}" in namespace "{target.namespace}"'
            )
        terminal.out(f"Run: {target.namespace}/{name}")
        terminal.out(f"State: {data['displayState']} (attempt {data['attempt']})")
        cause = data["failure"]
        if cause:
            owner = f" (owner: {cause['owner']})" if cause["owner"] else ""
            terminal.out(
                f"Failure: {cause['reason']} — {cause['category']}: {cause['summary']}{owner}"
            )
        if data["resumedFrom"]:
            terminal.out(f"Resumed from: {data['resumedFrom']}")
        terminal.history(data["entries"])

    def resume(self, request: ResumeRequest, terminal: Terminal) -> None:
        from pathlib import Path

        from tau.lifecycle.resume import resume
        from tau.render import redact_secrets
        from tau.resolve.layers import Overrides
        from tau.run.plan import Mode, plan
        from tau.runconfig import RunConfig, load

        loaded = load(Path(request.config))
        if not isinstance(loaded.config, RunConfig) or loaded.config.is_managed_dispatch:
            raise UsageError(
                f"{request.config}: tau run resume restarts direct run configs; a managed "
                "workflow is resubmitted with `tau run --config` (its trainer resumes from its "
                "own checkpoints)"
            )
        route = self.route
        overrides = Overrides(
            namespace=route.namespace,
            context=route.context,
            run_name=request.name,
            dry_run=request.dry_run,
        )
        prepared = plan(
            loaded,
            overrides,
            Mode.CLUSTER,
            project=route.project,
            argv=_argv(),
            system_namespace=route.system_namespace,
            say=terminal.err,
        ).connection()
        result = resume(
            prepared,
            request.name,
            checkpoint=request.checkpoint,
            force=request.force,
            dry_run=request.dry_run,
            say=terminal.err,
        )
        if isinstance(result, list):  # a dry run: the replacement, rendered
            from tau.run.manifests import dump

            sys.stdout.write(dump(redact_secrets(result), "yaml"))
            terminal.err("dry run: nothing was deleted or submitted")
            return
        terminal.out(f"{result.kind} {result.namespace}/{result.name} resumed")


def _pass_on(warnings: tuple[str, ...] | list[str], terminal: Terminal) -> None:
    """The API server's warnings (PodSecurity's among them), one stderr line each."""
    from tau.errors import clean

    for text in warnings:
        terminal.err(f"warning: API server: {clean(text)}")

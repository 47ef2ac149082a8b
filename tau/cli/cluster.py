"""`tau cluster`: install, validate and uninstall the TauGrid distribution (platform operators)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import typer

from tau import keys
from tau.cli.options import context_option
from tau.cli.output import Output, emit, output_option, print_table
from tau.cluster.chart import (
    DEFAULT_CHART,
    DEFAULT_CHART_VERSION,
    DEFAULT_NAMESPACE,
    DEFAULT_RELEASE,
    ChartRef,
)
from tau.errors import RuntimeFailure, UsageError
from tau.jsontypes import JSONValue

if TYPE_CHECKING:
    from tau.cluster.helm import Helm
    from tau.cluster.readiness import Report
    from tau.kube import KubeClient

app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    help="Install, validate and uninstall the TauGrid distribution on a Kubernetes 1.30+ "
    "cluster (platform operators).\n\n"
    "Helm (3 or 4, on PATH) does the installing; tau adds the plan, the bootstrap pass Kueue "
    "needs, the readiness report, node/topology diagnostics and the queue drain on uninstall.",
)
validate_app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    help="Read-only readiness checks (installation, topology) and opt-in GPU node probes.",
)
profiles_app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    help="Inspect ready TauCluster workload profiles.",
)
app.add_typer(validate_app, name="validate")
app.add_typer(profiles_app, name="profiles")


def _say(text: str) -> None:
    click.echo(text, err=True)


def _kube(context: str) -> KubeClient:
    from tau.kube import KubeClient

    return KubeClient(None, context, timeout=30.0)


def release_option() -> Any:
    return typer.Option(DEFAULT_RELEASE, "--release", help="Helm release name.")


def system_namespace_option() -> Any:
    return typer.Option(
        DEFAULT_NAMESPACE,
        "-n",
        "--namespace",
        help="Release namespace: the only namespace knob; every system component follows it.",
    )


def chart_option() -> Any:
    return typer.Option(
        DEFAULT_CHART,
        "--chart",
        help="Chart reference: OCI/repository reference or a local chart directory.",
    )


@app.command(
    help="Show the plan, run the two-phase Helm install, then the readiness report.\n\n"
    "A new release first gets a bootstrap pass (baseline queue off, --wait) so Kueue's "
    "webhooks serve before queue objects exist; every main pass uses --reset-values, so pass "
    "your complete values file each time.\n\n"
    "Examples:\n\n"
    "  tau cluster install --dry-run          # render summary, nothing applied\n\n"
    "  tau cluster install -f taugrid-values.yaml --context prod\n\n"
    "  tau cluster install --chart ./charts/taugrid \\\n"
    "      --set components.kueue.enabled=false",
)
def install(
    context: str = context_option(),
    release: str = release_option(),
    namespace: str = system_namespace_option(),
    chart: str = chart_option(),
    version: str = typer.Option(DEFAULT_CHART_VERSION, "--version", help="Chart version."),
    values: list[str] = typer.Option([], "-f", "--values", help="Values file (repeatable)."),
    set_values: list[str] = typer.Option([], "--set", help="key=value override (repeatable)."),
    set_string: list[str] = typer.Option([], "--set-string", help="String override (repeatable)."),
    timeout: str = typer.Option("15m", "--timeout", help="Bounds each Helm call and readiness."),
    wait: bool = typer.Option(
        False, "--wait", help="Also gate on Helm's generic resource watcher."
    ),
    atomic: bool = typer.Option(
        False, "--atomic", help="Roll back on a Helm failure (Helm 4: --rollback-on-failure)."
    ),
    create_namespace: bool = typer.Option(
        True, "--create-namespace/--no-create-namespace", help="Create the release namespace."
    ),
    dependency_update: bool = typer.Option(
        False,
        "--dependency-update",
        help="Let Helm fetch chart dependencies (needs registry access).",
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Render offline and print objects by kind; never contacts the cluster.",
    ),
    output: Output = output_option(),
) -> None:
    from tau.cluster import install as flow
    from tau.cluster.helm import Helm

    opts = flow.InstallOptions(
        chart=ChartRef(chart, version),
        release=release,
        namespace=namespace,
        context=context,
        timeout=timeout,
        create_namespace=create_namespace,
        wait=wait,
        atomic=atomic,
        dependency_update=dependency_update,
        values_files=values,
        set_values=set_values,
        set_string_values=set_string,
    )
    seconds = opts.validate()
    if output is Output.table:
        for line in flow.plan_lines(opts):
            _say(line)
    helm = Helm()
    if dry_run:
        preview = flow.dry_run(helm, opts)
        if output is Output.table:
            for line in flow.image_lines(preview.images):
                _say(line)
        for note in preview.notes:
            _say(f"note: {note}")
        summary = preview.kinds
        data: dict[str, Any] = {"kinds": [{"kind": k, "count": c} for k, c in summary]}
        data["total"] = sum(c for _, c in summary)
        data["images"] = [
            {"image": u.image, "workloads": list(u.workloads)} for u in preview.images
        ]

        def table() -> None:
            print_table(["kind", "count"], [*summary, ("TOTAL", data["total"])])
            typer.echo("TauGrid render summary (nothing was applied)")

        emit(data, output, table=table)
        return
    uses = flow.images(helm, opts)
    if output is Output.table:
        for line in flow.image_lines(uses):
            _say(line)
    client = _kube(context)
    flow.install(
        helm,
        opts,
        foreign_system_objects=lambda: flow.foreign_system_objects(client, namespace),
        progress=_say,
    )
    _say("helm release applied; running the readiness report")
    report = _readiness(helm, client, release, namespace, context, seconds, 5.0)
    _print_report(report, output)
    if not report.ready:
        raise RuntimeFailure(
            "TauGrid did not become ready: the release stays installed for inspection",
            hint=f"rerun `tau cluster validate installation --namespace {namespace}`",
        )
    if output is Output.table:
        typer.echo(
            "Next: tau workspace create taugrid-default --apply; wait for the workspace to be "
            "Ready; pre-provision a Bound PVC if runs use storage; tau workspace init-repo "
            "<name>; hand the repository to the researcher."
        )


def _readiness(
    helm: Helm | None,
    client: KubeClient,
    release: str,
    namespace: str,
    context: str,
    timeout: float,
    poll: float,
) -> Report:
    from tau.cluster import readiness
    from tau.cluster.install import release_values

    values = release_values(helm, release, namespace, context) if helm else None
    if values is None:
        _say("note: release values unreadable; validating every component")
    disabled = readiness.disabled_components(values)
    last: list[str] = []

    def progress(report: Report) -> None:
        waiting = [r.name for r in report.results if r.status == readiness.FAIL]
        if waiting and waiting != last:
            _say(f"waiting: {report.passed}/{report.required} checks passed ({', '.join(waiting)})")
            last[:] = waiting

    return readiness.wait_until_ready(
        lambda: readiness.evaluate(readiness.observe(client, release, namespace), disabled),
        timeout=timeout,
        poll_interval=poll,
        on_report=progress,
    )


def _print_report(report: Report, output: Output) -> None:
    def table() -> None:
        for line in report.lines():
            typer.echo(line)

    emit(report.as_data(), output, table=table)


def suite_option() -> Any:
    return typer.Option(
        [],
        "--suite",
        help="A directory of your own testinfra checks (test_*.py), run the same way as the"
        " shipped ones (repeatable).",
    )


@validate_app.command(
    "installation",
    help="Re-run the read-only control-plane readiness report.\n\n"
    "--suite DIR adds your own testinfra checks, run inside the Tau controller's container"
    " through testinfra's kubectl backend (needs kubectl on PATH and pytest-testinfra).",
)
def validate_installation(
    context: str = context_option(),
    release: str = release_option(),
    namespace: str = system_namespace_option(),
    timeout: str = typer.Option("5m", "--timeout", help="Poll until ready or this long."),
    poll_interval: str = typer.Option("5s", "--poll-interval", help="Time between polls."),
    suite: list[str] = suite_option(),
    output: Output = output_option(),
) -> None:
    from tau.cluster import readiness, suites
    from tau.cluster.helm import Helm
    from tau.cluster.install import parse_duration

    seconds = parse_duration(timeout)
    poll = parse_duration(poll_interval, "--poll-interval")
    dirs = suites.suite_dirs(suite)
    if dirs:
        command = "tau cluster validate installation --suite"
        suites.require_testinfra(command)
        suites.require_kubectl(command)
        suites.collect(dirs, dirs, rates_nodes=False)
    try:
        helm = Helm()
    except RuntimeFailure:
        helm = None
    client = _kube(context)
    readiness.require_api_server(client)
    report = _readiness(helm, client, release, namespace, context, seconds, poll)
    if dirs:
        target = readiness.controller_container(client, namespace)
        if isinstance(target, str):
            report.results.append(readiness.CheckResult("suite", readiness.FAIL, target))
        else:
            pod, container = target
            host = suites.kubectl_host(pod, namespace, container, context)
            result = suites.run(dirs, host, timeout=seconds)
            report.results.extend(readiness.suite_results(result))
    _print_report(report, output)
    if not report.ready:
        failing = "; ".join(f"{r.name}: {r.detail}" for r in report.results if r.status == "FAIL")
        raise RuntimeFailure(f"TauGrid did not become ready within {timeout} ({failing})")


@validate_app.command(
    "nodes",
    help="Run privileged GPU health probes (nvidia-smi, driver, MIG, NVLink, ECC, InfiniBand,"
    " node basics) across nodes.\n\n"
    "The checks are testinfra suites run from this machine through testinfra's kubectl"
    " backend (kubectl exec into one short-lived privileged pod per node); needs kubectl on"
    " PATH and pytest-testinfra (the validate extra).",
)
def validate_nodes(
    context: str = context_option(),
    gpu_class: str = typer.Option(
        "", "--gpu-class", help=f"Only nodes of this {keys.GPU_CLASS} ('any' = all)."
    ),
    selector: str = typer.Option("", "--selector", help="Raw node label selector."),
    min_healthy: int = typer.Option(
        0, "--min-healthy", min=0, help="Fail unless this many nodes are HEALTHY."
    ),
    timeout: str = typer.Option("2m", "--timeout", help="Per-node probe timeout."),
    suite: list[str] = suite_option(),
    include_cpu: bool = typer.Option(
        False,
        "--include-cpu",
        help="Also probe nodes without GPU resources: node basics run, GPU checks say no GPU.",
    ),
    image: str = typer.Option(
        "", "--image", help="Probe pod image (default: this version's tau runtime image)."
    ),
    output: Output = output_option(),
) -> None:
    from tau.cluster import probe, suites
    from tau.cluster.install import parse_duration

    seconds = parse_duration(timeout)
    label_selector, warning = probe.node_selector(gpu_class, selector)
    command = "tau cluster validate nodes"
    extra = suites.suite_dirs(suite)
    dirs = [suites.NODE_SUITE, *extra]
    suites.require_testinfra(command)
    suites.require_kubectl(command)
    if extra:  # a broken --suite is the operator's to fix before any pod is created
        suites.collect(dirs, extra)
    if warning:
        _say(f"warning: {warning}")
    client = _kube(context)
    nodes, stranded = probe.discover(client, label_selector, include_cpu=include_cpu)
    for name in stranded:
        _say(
            f"warning: {name} looks like GPU hardware but exposes no nvidia.com/* or DRA "
            "devices; not probed"
        )
    if not nodes:
        _say("no GPU nodes found")
        if min_healthy > 0:
            raise RuntimeFailure(f"0 healthy GPU nodes, --min-healthy {min_healthy}")
        return
    results = []
    for node in nodes:
        _say(f"probing {node.name} ...")
        health = probe.run_probe(
            client,
            node,
            timeout=seconds,
            image=image or probe.default_image(),
            suite_dirs=dirs,
            context=context,
        )
        results.append((node, health))
    healthy = sum(h.status == probe.HEALTHY for _, h in results)
    data: JSONValue = {
        "healthy": healthy,
        "total": len(results),
        "stranded": stranded,
        "nodes": [
            {
                "node": n.name,
                "source": n.source,
                "allocatable": n.count,
                "status": h.status,
                "reasons": h.reasons,
                "podError": h.pod_error,
                "probe": h.values,
                "checks": [
                    {"check": c.name, "outcome": c.outcome, "message": c.message} for c in h.checks
                ],
            }
            for n, h in results
        ],
    }

    def table() -> None:
        print_table(
            ["node", "gpus", "source", "nvlink", "ib", "ecc", "driver", "status"],
            [probe.table_row(n, h) for n, h in results],
        )
        typer.echo(f"{healthy}/{len(results)} nodes healthy")

    emit(data, output, table=table)
    noun = "nodes" if include_cpu else "GPU nodes"
    if not probe.exit_ok([h for _, h in results], min_healthy):
        raise RuntimeFailure(f"{healthy}/{len(results)} {noun} healthy")


@validate_app.command(
    "topology",
    help="Check that the GPU flavors of the ready workload profiles' ClusterQueues land on"
    " nodes: flavor exists, its node labels select Ready nodes exposing the GPU resource (device"
    " plugin or DRA), zones, InfiniBand pools. Without --profile or --cluster-queue, every"
    " profile Ready at the TauCluster's current generation is checked.",
)
def validate_topology(
    context: str = context_option(),
    cluster_queue: str = typer.Option(
        "", "--cluster-queue", help="Check this ClusterQueue instead of the ready profiles."
    ),
    profile: str = typer.Option(
        "", "--profile", help="Check only the queues this ready workload profile resolved to."
    ),
    output: Output = output_option(),
) -> None:
    from tau.cluster import topology

    if profile and cluster_queue:
        raise UsageError("--profile and --cluster-queue each choose the queues to check; pass one")
    findings = topology.validate(_kube(context), cluster_queue, profile)
    data: JSONValue = {
        "findings": [{"level": f.level, "check": f.label, "message": f.message} for f in findings],
        "summary": topology.summary(findings),
    }

    def table() -> None:
        for finding in findings:
            typer.echo(finding.line())
        typer.echo(topology.summary(findings))

    emit(data, output, table=table)
    errors = sum(f.level == topology.ERROR for f in findings)
    if errors:
        raise RuntimeFailure(f"topology validation found {errors} error(s)")


@app.command(
    help="Drain the release's queue policy while Kueue runs, then helm uninstall.\n\n"
    "Phase 1 re-renders the deployed chart version with baselineQueue.enabled=false so Kueue "
    "can clear its finalizers; phase 2 is helm uninstall. Pass the same --chart the release "
    "was installed from. CRDs, custom resources and namespaces stay.\n\n"
    "Example:\n\n"
    "  tau cluster uninstall --yes --context prod",
)
def uninstall(
    context: str = context_option(),
    release: str = release_option(),
    namespace: str = system_namespace_option(),
    chart: str = chart_option(),
    timeout: str = typer.Option("15m", "--timeout", help="Bounds each Helm call."),
    wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait for resource removal."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Simulate helm uninstall (no drain)."),
    keep_history: bool = typer.Option(False, "--keep-history", help="Keep the release history."),
    no_hooks: bool = typer.Option(False, "--no-hooks", help="Skip chart hooks."),
    drain_queue: bool = typer.Option(
        True, "--drain-queue/--no-drain-queue", help="Phase 1 queue drain."
    ),
    yes: bool = typer.Option(
        False, "--yes", help="Confirm the uninstall (required unless --dry-run)."
    ),
) -> None:
    from tau.cluster import uninstall as flow
    from tau.cluster.helm import Helm
    from tau.cluster.install import parse_duration

    parse_duration(timeout)
    if not yes and not dry_run:
        raise UsageError("uninstall removes the TauGrid release: pass --yes to confirm")
    opts = flow.UninstallOptions(
        chart=ChartRef(chart),
        release=release,
        namespace=namespace,
        context=context,
        timeout=timeout,
        wait=wait,
        dry_run=dry_run,
        keep_history=keep_history,
        no_hooks=no_hooks,
        drain_queue=drain_queue,
    )
    helm = Helm()
    client = _kube(context)
    outcome = flow.drain(helm, opts, lambda objs: flow.remaining_queue_objects(client, objs), _say)
    for note in outcome.notes:
        _say(f"note: {note}")
    flow.uninstall(helm, opts, outcome, _say)
    typer.echo(
        f"TauGrid release {release} removed from {namespace}. CRDs, custom resources, retained "
        "namespaces, cloud infrastructure, storage and workspace data remain."
    )


@profiles_app.command(
    "export",
    help="Export the ready workload-profile revision as a snapshot (stdout or --output file). "
    "Refuses stale, drifted or unready profile sets: the snapshot is a review artifact for "
    "--dry-run=client rendering.",
)
def profiles_export(
    context: str = context_option(),
    output_path: str = typer.Option(
        "", "--output", help="Write the snapshot atomically to this file (default: stdout)."
    ),
) -> None:
    from tau.profiles.live import export_profiles

    text = export_profiles(_kube(context), Path(output_path) if output_path else None)
    if output_path:
        _say(f"wrote {output_path}")
    else:
        typer.echo(text, nl=False)


@app.command("explain-values", help="Print the TauGrid install values reference (Markdown).")
def explain_values(
    chart: str = typer.Option(
        "", "--chart", help="Local chart directory (default: the chart shipped with tau)."
    ),
) -> None:
    from tau.cluster import values_reference

    chart_dir = Path(chart) if chart else values_reference.default_chart()
    typer.echo(values_reference.markdown(chart_dir), nl=False)

"""`tau run history record`: flags -> `tau.lifecycle.recording` with the chosen sinks."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING

import click
import typer

from tau import keys
from tau.errors import UsageError

if TYPE_CHECKING:
    from tau.lifecycle.recording import Sink

RECORD_EPILOG = (
    "\b\nExamples:\n"
    "  tau run history record -n team-a --cluster aks-1 \\\n"
    "      --store /var/lib/taugrid/store\n"
    "  tau run history record -n team-a --cluster aks-1 \\\n"
    "      --kusto-endpoint https://adx.westus.kusto.windows.net \\\n"
    "      --kusto-database Metrics"
)


def record(
    namespace: str = typer.Option(..., "-n", "--namespace", help="Workload namespace to watch."),
    cluster: str = typer.Option(..., "--cluster", help="Cluster name stamped on every row."),
    workspace_id: str = typer.Option(
        "", "--workspace-id", help="Workspace id of the rows (default: the namespace)."
    ),
    result_scope: str = typer.Option(
        "", "--result-scope", help="Result scope of the rows (default: the workspace id)."
    ),
    store: Path = typer.Option(
        None,
        "--store",
        envvar=keys.ENV_EXP_STORE,
        help="Workspace experiment store to write rows to (the Portal's run history).",
    ),
    kusto_endpoint: str = typer.Option("", "--kusto-endpoint", help="ADX cluster URL."),
    kusto_ingest_endpoint: str = typer.Option(
        "", "--kusto-ingest-endpoint", help="ADX ingestion URL (default: ingest-<cluster>)."
    ),
    kusto_database: str = typer.Option("Metrics", "--kusto-database", help="ADX database."),
    kusto_table: str = typer.Option("TauExpRunLifecycle", "--kusto-table", help="ADX table."),
    interval: str = typer.Option("30s", "--interval", help="Longest time between passes."),
    ingest_timeout: str = typer.Option("2m", "--ingest-timeout", help="Timeout of one write."),
    once: bool = typer.Option(False, "--once", help="One pass, write, then exit."),
    health_addr: str = typer.Option(
        ":8080", "--health-addr", help="HOST:PORT of /healthz and /readyz ('' disables)."
    ),
    kubeconfig: str = typer.Option("", "--kubeconfig", help="Kubeconfig (default: in-cluster)."),
    context: str = typer.Option("", "--context", help="Kubeconfig context."),
) -> None:
    """Record the lifecycle of the namespace's runs (Jobs, RayJobs, Kueue Workloads)."""
    from tau.cli.options import duration_seconds
    from tau.kube import KubeClient
    from tau.lifecycle.recorder import Scope
    from tau.lifecycle.recording import Recorder, serve_health

    if store is None and not kusto_endpoint:
        raise UsageError(
            "the recorder needs a sink: pass --store PATH (the workspace store) and/or "
            "--kusto-endpoint URL",
            owner="platform operator (lifecycleRecorder)",
        )
    every = duration_seconds("--interval", interval)
    timeout = duration_seconds("--ingest-timeout", ingest_timeout)
    sinks: list[Sink] = []
    if store is not None:
        from tau.portal.lifecycle_sinks import StoreSink

        sinks.append(StoreSink(store))
    if kusto_endpoint:
        from tau.portal.kusto import KustoSink, azure_token

        if not kusto_endpoint.startswith("https://"):
            raise UsageError(
                f"--kusto-endpoint {kusto_endpoint[:80]!r} must be an https:// URL",
                owner="platform operator (lifecycleRecorder.kusto.endpoint)",
            )
        sinks.append(
            KustoSink(
                kusto_endpoint,
                kusto_database,
                kusto_table,
                token=azure_token(kusto_endpoint),
                timeout=timeout,
                ingest=kusto_ingest_endpoint,
            )
        )
    scope = Scope(cluster, namespace, workspace_id, result_scope)
    recorder = Recorder(
        KubeClient(kubeconfig or None, context),
        scope,
        sinks,
        interval=every,
        say=lambda line: click.echo(line, err=True),
    )
    if health_addr and not once:
        serve_health(recorder, health_addr)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: recorder.stop())
    click.echo(
        f"recording {namespace} (cluster {cluster}) to {', '.join(s.name for s in sinks)}",
        err=True,
    )
    raise typer.Exit(recorder.run(once=once))

"""`taugrid-portal portal serve`: flags -> tau.portal.web -> serve.

The Portal is read-only and single-workspace; it runs in-cluster from the chart (its
ServiceAccount, no kubeconfig) or on an operator's machine against a kubeconfig context.
"""

from __future__ import annotations

from pathlib import Path

import click

from tau import keys
from tau.portal.cli.aliases import AliasGroup


@click.group(cls=AliasGroup, help="The cluster Portal: Runs, Jobs/Queue, Nodes and Experiments.")
def portal() -> None:
    pass


@portal.command(
    epilog=(
        "\b\nExamples:\n"
        "  taugrid-portal portal serve -n team-a --workspace team-a --store /srv/store\n"
        "  taugrid-portal portal serve -n team-a --jobs-scope-mode workspace \\\n"
        "      --run-history-enabled\n"
        "  taugrid-portal portal serve -n team-a --run-history-enabled --source kusto \\\n"
        "      --kusto-endpoint https://adx.westus.kusto.windows.net"
    )
)
@click.option("--addr", default="127.0.0.1:8080", show_default=True, help="HOST:PORT to bind.")
@click.option(
    "--kubeconfig", default="", help="Kubeconfig file (default: in-cluster or $KUBECONFIG)."
)
@click.option("--context", default="", help="Kubeconfig context (default: current).")
@click.option(
    "-n",
    "--namespace",
    "namespaces",
    multiple=True,
    help="Workspace namespace whose runs the Portal shows (repeatable; none: Runs is 503).",
)
@click.option("--workspace", default="default", show_default=True, help="Workspace name served.")
@click.option("--cluster", default="", help="Cluster name shown and stamped on durable ids.")
@click.option(
    "--store",
    type=click.Path(path_type=Path),
    default=None,
    envvar=keys.ENV_EXP_STORE,
    help="Workspace experiment store (read-only): Experiments, Stellar and run history.",
)
@click.option(
    "--jobs-scope-mode",
    type=click.Choice(["disabled", "workspace", "operator"]),
    default="disabled",
    show_default=True,
    help="Who the Jobs/Queue board is scoped to.",
)
@click.option(
    "--jobs-operator-scope",
    multiple=True,
    help="TEAM=NAMESPACE/LOCALQUEUE reviewed for --jobs-scope-mode operator (repeatable).",
)
@click.option(
    "--run-history-enabled",
    is_flag=True,
    help="Merge the lifecycle recorder's rows (the store, or ADX with --source kusto) into "
    "the Runs board.",
)
@click.option("--run-history-limit", default=200, show_default=True, help="History rows shown.")
@click.option(
    "--run-history-table",
    default="TauExpRunLifecycle",
    show_default=True,
    help="ADX lifecycle table (with --source kusto; its DashboardRows() function is read).",
)
@click.option(
    "--source",
    type=click.Choice(["local", "kusto"]),
    default="local",
    show_default=True,
    help="Durable run history: local (the workspace store) or kusto (ADX); Experiments "
    "always read the workspace store.",
)
@click.option("--kusto-endpoint", default="", help="ADX cluster URL for --source kusto.")
@click.option("--kusto-database", default="Metrics", show_default=True, help="ADX database.")
@click.option(
    "--kueueviz",
    is_flag=True,
    help="Serve Kueue (Live): Kueue's KueueViz pages under /kueueviz/, backed by the Portal's "
    "own read-only watches.",
)
@click.option(
    "--kueueviz-bundle",
    type=click.Path(path_type=Path),
    default=None,
    envvar=keys.ENV_KUEUEVIZ_BUNDLE,
    help="The KueueViz frontend bundle for --kueueviz (the Portal image sets it; "
    "hack/setup/25-kueueviz.sh builds it).",
)
@click.option(
    "--allow-host",
    "allowed_hosts",
    multiple=True,
    help="Host name the Portal answers to besides IP literals and localhost (repeatable).",
)
def serve(
    addr: str,
    kubeconfig: str,
    context: str,
    namespaces: tuple[str, ...],
    workspace: str,
    cluster: str,
    store: Path | None,
    jobs_scope_mode: str,
    jobs_operator_scope: tuple[str, ...],
    run_history_enabled: bool,
    run_history_limit: int,
    run_history_table: str,
    source: str,
    kusto_endpoint: str,
    kusto_database: str,
    kueueviz: bool,
    kueueviz_bundle: Path | None,
    allowed_hosts: tuple[str, ...],
) -> None:
    """Serve the Portal's boards and the mounted Stellar server."""
    from tau.portal import server
    from tau.portal.web import serving
    from tau.portal.web.config import OperatorScope, PortalConfig
    from tau.portal.web.kueueviz import check_bundle

    config = PortalConfig(
        namespaces=tuple(dict.fromkeys(namespaces)),
        workspace=workspace,
        cluster=cluster,
        store=store,
        jobs_scope_mode=jobs_scope_mode,
        operator_scopes=tuple(OperatorScope.parse(s) for s in jobs_operator_scope),
        run_history_enabled=run_history_enabled,
        run_history_limit=run_history_limit,
        run_history_table=run_history_table,
        source=source,
        kusto_endpoint=kusto_endpoint,
        kusto_database=kusto_database,
        allowed_hosts=allowed_hosts,
        kueueviz_bundle=check_bundle(kueueviz_bundle) if kueueviz else None,
    )
    sock = server.listen(addr)
    click.echo(f"Portal serving {', '.join(config.namespaces)} on http://{addr}/portal", err=True)
    serving.run(config, sock, kubeconfig=kubeconfig or None, context=context)

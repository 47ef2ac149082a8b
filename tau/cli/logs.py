"""`tau logs NAME`: a run's logs, found across your workspaces.

Without --workspace/--context/-n, tau looks in the connected workspace first, then in every
workspace connection cached on this machine; a name found in two places is refused until
you choose one.
"""

from __future__ import annotations

import typer

from tau.cli.run_lifecycle import logs_verb

app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


app.command(
    help="Print a run's logs (Job pods, or a RayJob's driver via its head pod).\n\n"
    "A local run (`tau run TARGET --local`) prints its current attempt's log.\n\n"
    "\b\n"
    "Examples:\n"
    "  tau logs train-x1 --tail 50\n"
    "  tau logs train-x1 -c main --previous --timestamps\n"
    "  tau logs train-x1 --all-containers --prefix -f\n"
    "  tau logs train-x1 --kusto-cluster aks-eus-1 --kusto-database Logs\n\n"
    "Once KubeRay has deleted a RayJob's head pod, its driver output is read from the central\n"
    "log offload (ADX Logs.ContainerLogs). --kusto-cluster, --kusto-endpoint and\n"
    "--kusto-database each override the workspace's ConfigMap tau-log-connection."
)(logs_verb(discover=True))

"""`taugrid-portal experiment kusto ...`: ADX (Kusto) helpers for TauGrid producers."""

from __future__ import annotations

import click


@click.group(help="ADX (Kusto) schema helpers: KQL text for review, never executed here.")
def kusto() -> None:
    pass


@kusto.command(
    epilog="\b\nExample:\n  taugrid-portal experiment kusto schema --ingestion lifecycle > l.kql"
)
@click.option(
    "--ingestion",
    type=click.Choice(["lifecycle"]),
    required=True,
    help="Which producer's table: lifecycle (tau run history record).",
)
@click.option("--table", default="TauExpRunLifecycle", show_default=True, help="Table name.")
def schema(ingestion: str, table: str) -> None:
    """Print the KQL of a producer's table, JSON ingestion mapping and dashboard function."""
    from tau.portal.kusto import lifecycle_kql

    click.echo(lifecycle_kql(table), nl=False)

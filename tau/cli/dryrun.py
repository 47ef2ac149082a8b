"""`tau run --dry-run=client`: print the rendered objects and where every value came from.

stdout carries only the manifests (multi-document YAML, or a JSON list with `-o json`) so
it can be piped to `kubectl create -f -`; warnings, notes and the provenance table go to
stderr.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from tau.errors import clean

if TYPE_CHECKING:
    from tau.run.plan import RunPlan


def print_preview(plan: RunPlan, output: str) -> None:
    from tau.render import redact_secrets
    from tau.resolve.provenance import format_table
    from tau.run.manifests import dump

    resolution = plan.resolution
    # An offline plan renders before it says anything; a live one said its warnings while
    # it read the cluster and renders after the provenance table.
    objects = None if plan.live else redact_secrets(plan.objects())
    for warning in [] if plan.live else resolution.warnings:
        click.echo(f"warning: {clean(str(warning))}", err=True)
    for note in resolution.notes:
        click.echo(f"note: {note}", err=True)
    rows = [
        ("config hash", resolution.intent.provenance.config_hash[:12], "derived (config)"),
        *resolution.provenance.rows(),
    ]
    click.echo(format_table(rows), err=True, nl=False)
    if objects is None:
        objects = redact_secrets(plan.objects())
    sys.stdout.write(dump(objects, output))

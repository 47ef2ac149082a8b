"""`tau run --dry-run=client`: print the rendered objects and where every value came from.

stdout carries only the manifests (multi-document YAML, or a JSON list with `-o json`) so
it can be piped to `kubectl create -f -`; warnings, notes and the provenance table go to
stderr.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from tau.errors import UsageError, clean

OUTPUTS = ("yaml", "json")


def client_dry_run(loaded: Any, overrides: Any, *, output: str, project: str) -> None:
    from tau.render import redact_secrets, render
    from tau.resolve.provenance import format_table
    from tau.resolve.request import resolve_request

    if output not in OUTPUTS:
        raise UsageError("--output must be one of: yaml, json (for --dry-run=client)")
    resolution = resolve_request(loaded, overrides, project=project, argv=("tau", *sys.argv[1:]))
    objects = redact_secrets(render(resolution.intent))
    for warning in resolution.warnings:
        click.echo(f"warning: {clean(str(warning))}", err=True)
    for note in resolution.notes:
        click.echo(f"note: {note}", err=True)
    rows = [
        ("config hash", resolution.intent.provenance.config_hash[:12], "derived (config)"),
        *resolution.provenance.rows(),
    ]
    click.echo(format_table(rows), err=True, nl=False)
    sys.stdout.write(dump(objects, output))


def dump(objects: list[dict[str, Any]], output: str) -> str:
    if output == "json":
        return json.dumps(objects, indent=2) + "\n"
    import yaml

    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False)

"""terraform-compat command line: convert tfvars, print the adoption mapping, write import files.

Run from the project root: `python terraform-compat --help`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import yaml

from infra.config import parse_stack_config, settings_from_stack_file
from tau.cli.main import run
from tau.cli.output import Output, emit, print_table
from tau.errors import UsageError
from tfcompat.convert import convert, read_tfvars, write_stack_file
from tfcompat.mapping import MAPPINGS, import_file

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_STACKS_DIR = PROJECT_ROOT / "stacks"
STACK_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")


def _stack_name(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    # Pulumi's own stack-name alphabet; it also keeps the name a single file name.
    if not STACK_NAME.match(value):
        raise click.BadParameter("use letters, digits, '-', '_' and '.' only")
    return value


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    no_args_is_help=True,
)
def cli() -> None:
    """Adopt an upstream-style Terraform AKS environment (terraform/aks) into Pulumi stacks.

    \b
    1. convert      terraform.tfvars -> stacks/Pulumi.<stack>.yaml (same names, same validation)
    2. mapping      which Pulumi resource takes over each Terraform address
    3. import-file  a `pulumi import --file` document for an existing environment
    """


@cli.command("convert")
@click.argument("tfvars", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--stack",
    required=True,
    callback=_stack_name,
    help="Stack name: writes stacks/Pulumi.<stack>.yaml.",
)
@click.option(
    "--stacks-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_STACKS_DIR,
    show_default="stacks/",
    help="Directory of stack config files (Pulumi.yaml stackConfigDir).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing stack file.")
def convert_command(tfvars: Path, stack: str, stacks_dir: Path, force: bool) -> None:
    """Convert TFVARS into a validated Pulumi stack config file."""
    config, notes = convert(read_tfvars(tfvars.read_text(encoding="utf-8"), tfvars.name))
    for note in notes:
        click.echo(f"note: {note}", err=True)
    target = write_stack_file(config, stack, stacks_dir, tfvars.name, force=force)
    click.echo(f"wrote {target}")
    click.echo(f"next: pulumi preview --stack {stack}")


@cli.command("mapping")
@click.option(
    "-o",
    "--output",
    type=click.Choice([item.value for item in Output]),
    default=Output.table.value,
    help="table (human), json or yaml.",
)
def mapping_command(output: str) -> None:
    """Print Terraform address -> Pulumi type, logical name, parent and import ID format."""
    rows = [
        {
            "terraform": row.terraform,
            "pulumi_type": row.pulumi_type,
            "name": row.name,
            "parent": row.parent,
            "import_id": row.import_id,
            "note": row.note,
        }
        for row in MAPPINGS
    ]
    emit(
        rows,
        Output(output),
        table=lambda: print_table(
            ["terraform", "pulumi type", "name", "import id"],
            [
                [
                    row["terraform"],
                    row["pulumi_type"] or "-",
                    row["name"] or "-",
                    row["import_id"] or row["note"],
                ]
                for row in rows
            ],
        ),
    )


@cli.command("import-file")
@click.option(
    "--stack",
    required=True,
    callback=_stack_name,
    help="Stack whose config names the objects to adopt.",
)
@click.option(
    "--stacks-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_STACKS_DIR,
    show_default="stacks/",
)
def import_file_command(stack: str, stacks_dir: Path) -> None:
    """Print a `pulumi import --file` document adopting the stack's Terraform-built objects."""
    path = stacks_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        raise UsageError(
            f"{path} not found", hint=f"run convert --stack {stack} first", owner="platform"
        )
    document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    config = parse_stack_config(settings_from_stack_file(document))
    click.echo(json.dumps(import_file(config, stack), indent=2))


def main() -> int:
    return run(cli, "terraform-compat")

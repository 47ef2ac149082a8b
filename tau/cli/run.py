"""`tau run [TARGET]`: validate, render and submit a checked-in target.

Flags -> `tau.runconfig` -> print. `TARGET` is a positional of the root itself (see
`TargetGroup`), so `tau run train` and `tau run validate train` never collide.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click
import typer

from tau import keys
from tau.cli.boolflags import accept_bool_values
from tau.cli.groups import TargetGroup
from tau.cli.helptext import keep_example_blocks
from tau.cli.options import context_option, namespace_option, workspace_option
from tau.errors import UsageError, clean

if TYPE_CHECKING:
    from tau.runconfig.issues import ConfigIssue
    from tau.runconfig.reference import Row

DRY_RUN_MODES = ("client", "server")

HELP = (
    "Validate, render and submit a checked-in run config.\n\n"
    "TARGET names tau/TARGET.yaml (or .yml); without it tau uses --config, else the first of "
    "tau.yaml, tau.yml, .tau.yaml. The namespace, queue and identity come from the workspace "
    "connection; flags override them.\n\n"
    "Examples:\n\n"
    "  tau run validate train              # offline check of tau/train.yaml\n"
    "  tau run train --dry-run=client      # render the workload, submit nothing\n"
    "  tau run train --local              # run it on this machine (no cluster)\n"
    "  tau run --config exp/tau.yaml -n research --context aks-prod\n"
    "  tau run schema -o json              # JSON Schema of the run config\n"
    "  tau run explain-config              # every field: type, default, status\n\n"
    "Offline rendering against a saved TauWorkloadProfileSnapshot uses "
    "policy.workload_profile_snapshot with --dry-run=client."
)

# The verbs `tau.cli.run_lifecycle` registers, in help order.
LIFECYCLE_VERBS = ("status", "list", "logs", "cancel", "resume", "get", "history")


class RunGroup(TargetGroup):
    """`tau run`: the lifecycle verbs load on first use, so `tau run validate`, `schema`,
    `explain-config` and a dry-run neither import nor convert their typer definitions."""

    persistent = ("project", "system_namespace")

    def verbs(self) -> tuple[str, ...]:
        return (*self.commands, *(verb for verb in LIFECYCLE_VERBS if verb not in self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LIFECYCLE_VERBS:
            self._load_lifecycle()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._load_lifecycle()
        return super().list_commands(ctx)

    def _load_lifecycle(self) -> None:
        if all(verb in self.commands for verb in LIFECYCLE_VERBS):
            return
        from tau.cli import run_lifecycle

        lifecycle = typer.Typer(rich_markup_mode=None, add_completion=False)
        run_lifecycle.register(lifecycle)
        group = typer.main.get_group(lifecycle)
        for name, command in group.commands.items():
            self.add_command(keep_example_blocks(accept_bool_values(command)), name)


app = typer.Typer(
    rich_markup_mode=None,
    cls=RunGroup,
    add_completion=False,
    help=HELP,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def config_option() -> str:  # typer.Option is typed Any so it can default any parameter
    return cast(
        str,
        typer.Option(
            "",
            "-c",
            "--config",
            help="Run config file (default: tau/TARGET.yaml, else tau.yaml, tau.yml, .tau.yaml).",
        ),
    )


def warn(issues: list[ConfigIssue]) -> None:
    for issue in issues:
        click.echo(f"warning: {clean(str(issue))}", err=True)


@app.callback(invoke_without_command=True)
def run(
    ctx: typer.Context,
    target: str = typer.Argument(
        None,
        metavar="[TARGET]",
        help="Checked-in target: tau/TARGET.yaml. With --config it overrides the run name.",
        show_default=False,
    ),
    config: str = config_option(),
    namespace: str = namespace_option("Workload namespace (default: config, then workspace)."),
    workspace: str = workspace_option(),
    context: str = context_option(),
    dry_run: str = typer.Option(
        "",
        "--dry-run",
        help="client: render and print without submitting; server: also validate with the "
        "API server. Empty submits.",
    ),
    project: str = typer.Option(
        "", "--project", help="Project from tau.projects.yaml (monorepos)."
    ),
    service_account: str = typer.Option(
        "", "--service-account", help="Pod ServiceAccount (overrides the workspace default)."
    ),
    key_vault: str = typer.Option(
        "", "--key-vault", help="Key Vault for runtime.env_kv (managed workflows only)."
    ),
    tenant_id: str = typer.Option("", "--tenant-id", help="Entra tenant for Key Vault access."),
    workload_identity_client_id: str = typer.Option(
        "", "--workload-identity-client-id", help="Managed identity client ID for Key Vault."
    ),
    system_namespace: str = typer.Option(
        "tau-system",
        "--system-namespace",
        envvar=keys.ENV_SYSTEM_NAMESPACE,
        help="Namespace holding TauWorkspace and TauCluster objects.",
    ),
    output: str = typer.Option(
        "yaml",
        "-o",
        "--output",
        help="--dry-run output: yaml (multi-document) or json (a list of objects); with "
        "--dry-run=server, the objects as the API server returned them.",
    ),
    local: bool = typer.Option(
        False,
        "--local",
        help="Run on this machine with the local engine (same env contract and evidence; "
        "no cluster). Never chosen implicitly.",
    ),
    data_root: str = typer.Option(
        "", "--data-root", help="With --local: the directory that stands for /data."
    ),
) -> None:
    if ctx.invoked_subcommand is not None:
        return
    if dry_run and dry_run not in DRY_RUN_MODES:
        raise UsageError("--dry-run must be one of: client, server")
    from tau.resolve.target import check_workspace_agrees, locate_run_config
    from tau.runconfig import load

    located = locate_run_config(
        Path.cwd(), target=None if config else target, config=config or None, project=project
    )
    path = located.path
    loaded = load(path)
    warn(loaded.warnings)
    if located.project is not None:
        project = located.project.name
        policy = getattr(loaded.config, "policy", None)
        check_workspace_agrees(located, getattr(policy, "workspace", None) or "", workspace)
    if data_root and not local:
        raise UsageError("--data-root needs --local")
    if local:
        if dry_run:
            raise UsageError("--local cannot be combined with --dry-run")
        _refuse_cluster_flags(ctx)
    from tau.resolve.layers import Overrides
    from tau.run.plan import Mode, plan

    argv = ("tau", *sys.argv[1:])
    if local:
        from tau.cli.run_lifecycle import backend, route, terminal

        chosen = backend(None, local, route(context, namespace, workspace), data_root=data_root)
        chosen.submit(plan(loaded, Overrides(), Mode.LOCAL, argv=argv), terminal())
        return

    overrides = Overrides(
        namespace=namespace,
        workspace=workspace,
        context=context,
        service_account=service_account,
        run_name=target if config and target else "",
        dry_run=dry_run,
        key_vault=key_vault,
        tenant_id=tenant_id,
        workload_identity_client_id=workload_identity_client_id,
    )
    if dry_run == "client":
        from tau.cli.dryrun import print_preview
        from tau.run.manifests import OUTPUTS

        if output not in OUTPUTS:
            raise UsageError("--output must be one of: yaml, json (for --dry-run=client)")
        preview = plan(
            loaded,
            overrides,
            Mode.PREVIEW,
            project=project,
            argv=argv,
            system_namespace=system_namespace,
            say=lambda text: click.echo(text, err=True),
        )
        print_preview(preview, output)
        return
    from click.core import ParameterSource

    from tau.cli.run_lifecycle import backend, route, terminal

    given = ctx.get_parameter_source("output") is ParameterSource.COMMANDLINE
    if given and not dry_run:
        raise UsageError("--output applies to --dry-run=client|server; a submission prints its run")
    if given and dry_run == "server" and output not in ("yaml", "json"):
        raise UsageError("--output must be one of: yaml, json (for --dry-run)")
    live = plan(
        loaded,
        overrides,
        Mode.CLUSTER,
        project=project,
        argv=argv,
        system_namespace=system_namespace,
        say=terminal().err,
    )
    chosen = backend(None, False, route(context, namespace, workspace))
    chosen.submit(live, terminal(), output=output if given else "")


# Flags that only mean something for a cluster submission; --local must not silently drop them.
_CLUSTER_ONLY = {
    "namespace": "--namespace",
    "workspace": "--workspace",
    "context": "--context",
    "service_account": "--service-account",
    "key_vault": "--key-vault",
    "tenant_id": "--tenant-id",
    "workload_identity_client_id": "--workload-identity-client-id",
    "system_namespace": "--system-namespace",
}


def _refuse_cluster_flags(ctx: typer.Context) -> None:
    """Only flags typed on this command line count; $TAU_CONTEXT and friends may stay set."""
    from click.core import ParameterSource

    given = [
        flag
        for param, flag in _CLUSTER_ONLY.items()
        if ctx.get_parameter_source(param) is ParameterSource.COMMANDLINE
    ]
    if given:
        verb = "selects" if len(given) == 1 else "select"
        raise UsageError(
            f"--local runs on this machine, but {', '.join(given)} {verb} a cluster",
            hint="remove the cluster flags, or drop --local to submit to the cluster",
        )


@app.command(
    help="Check a run config offline (no cluster contact); prints '<path> is valid'.\n\n"
    "Beyond the schema and field rules it refuses an empty file, a missing name and an "
    "entrypoint that does not exist. Values only a cluster supplies (image, GPUs from a "
    "workload profile) are left to the dry-run.\n\n"
    "Examples:\n\n"
    "  tau run validate train                          # tau/train.yaml\n"
    "  tau run validate --config exp/tau.yaml          # any file\n"
    "  tau run validate sweep-3 --config exp/tau.yaml  # NAME overrides name:"
)
def validate(
    name: str = typer.Argument(
        None,
        metavar="[NAME]",
        help="Target name: tau/NAME.yaml. With --config it overrides the config's name:.",
        show_default=False,
    ),
    config: str = config_option(),
) -> None:
    from tau.runconfig import discover, load
    from tau.runconfig.offline import check_runnable

    path = discover(Path.cwd(), target=None if config else name, config=config or None)
    loaded = load(path)
    if loaded.is_managed:
        raise UsageError(
            f"{path}: managed workflow manifests are outside tau run validate; they are "
            "generated and validated by the Tau Python SDK",
            hint="validate the direct config that references it, or regenerate it",
        )
    check_runnable(loaded, run_name=name if config and name else "")
    warn(loaded.warnings)
    click.echo(f"{path} is valid")


@app.command(help="Print the run config JSON Schema (generated from the models).")
def schema(
    output: str = typer.Option("json", "-o", "--output", help="Output format: json."),
) -> None:
    if output != "json":
        raise UsageError("--output must be json")
    import json

    from tau.runconfig.reference import json_schema

    click.echo(json.dumps(json_schema(), indent=2))


@app.command(
    "explain-config",
    help="Explain every run config field: type, default, status and rules. Prints readable "
    "text on a terminal and Markdown when piped (choose with --format).",
)
def explain_config(
    format: str = typer.Option(
        "auto", "--format", help="text, markdown, or auto (text on a terminal)."
    ),
) -> None:
    if format not in ("auto", "text", "markdown"):
        raise UsageError("--format must be one of: auto, text, markdown")
    from tau.runconfig import reference

    if format == "markdown" or (format == "auto" and not sys.stdout.isatty()):
        sys.stdout.write(reference.markdown())
        return
    _print_reference(reference.rows())


def _print_reference(rows: list[Row]) -> None:
    """kubectl-explain style: one block per field, readable at any terminal width."""
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False)
    console.print("[bold]Tau run config reference[/bold]\n")
    for row in rows:
        facts = [row.type]
        if row.default is not None:
            facts.append(f"default {row.default}")
        if row.status != "supported":
            facts.append(row.status)
        console.print(f"[bold cyan]{escape(row.path)}[/]  [dim]{escape(', '.join(facts))}[/]")
        for line in (row.description, _values(row), row.notes):
            if line:
                console.print(f"    {escape(line)}")
    console.print("\nAs Markdown: tau run explain-config --format markdown")


def _values(row: Row) -> str:
    return ("values: " + ", ".join(row.values)) if row.values else ""

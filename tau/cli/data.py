"""`tau data dataset|model`: flags -> `tau.data` -> print.

Every verb works on the connected workspace's data PVC (through short-lived helper Jobs, as the
workspace identity) unless `--registry file://DIR` names a local directory.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import typer

from tau import keys
from tau.cli.options import context_option, namespace_option
from tau.cli.output import check_output, emit, output_option, print_table
from tau.errors import RuntimeFailure, UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from pydantic import BaseModel

    from tau.data.records import DatasetAlias, DatasetRecord, ModelAlias, ModelRecord
    from tau.data.root import Root, Scope

SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    context_settings=SETTINGS,
    help="Dataset and model registries: one place to resolve durable inputs.\n\n"
    "Records live on the workspace's data PVC (default PVC blob-training, mounted at /data in "
    "runs) and are read and written by short-lived helper Jobs under your workspace identity. "
    "Records are immutable; only aliases move.",
)
dataset_app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    context_settings=SETTINGS,
    help="The curated dataset registry: register immutable versions, move aliases, verify "
    "content, ingest bytes.\n\n"
    "A run references a version as `dataset:NAME@VERSION` or `dataset:NAME@ALIAS` in a "
    "runtime.env value; tau replaces it with the version's path under /data at submission.",
)
dataset_alias_app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    help="Movable pointers to dataset versions.",
)
model_app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    context_settings=SETTINGS,
    help="Durable model checkpoints of finished runs, and their aliases.\n\n"
    "`index rebuild` turns what runs left in /data/checkpoints/{finetunes,workflows}/RUN "
    "(model.json, metrics.json, artifacts.json) into registry rows.",
)
model_alias_app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    no_args_is_help=True,
    help="Movable pointers to model runs.",
)
model_index_app = typer.Typer(
    rich_markup_mode=None, add_completion=False, no_args_is_help=True, help="Registry index."
)
app.add_typer(dataset_app, name="dataset")
app.add_typer(model_app, name="model")
dataset_app.add_typer(dataset_alias_app, name="alias")
model_app.add_typer(model_alias_app, name="alias")
model_app.add_typer(model_index_app, name="index")

REGISTRY = typer.Option(
    "pvc", "--registry", help="pvc (the workspace data PVC) or file://DIR (a local directory)."
)
PVC = typer.Option(keys.DEFAULT_PVC, "--pvc", help="The workspace data PVC (pvc registry).")
TAGS = typer.Option([], "--tag", help="KEY=VALUE (repeatable).")


def _root(
    ctx: typer.Context,
    registry: str,
    pvc: str,
    context: str,
    namespace: str,
    scope: tuple[Scope, ...],
) -> Root:
    from click.core import ParameterSource

    from tau.data.connect import open_root

    given = [
        flag
        for param, flag in (("context", "--context"), ("namespace", "-n"), ("pvc", "--pvc"))
        if ctx.get_parameter_source(param) is ParameterSource.COMMANDLINE
    ]
    return open_root(
        registry=registry,
        scope=scope,
        pvc=pvc,
        context=context,
        namespace=namespace,
        cluster_flags=given,
    )


def _warn(warnings: list[str]) -> None:
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)


def _tags(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--tag expects KEY=VALUE, got {pair!r}")
        out[key] = value
    return out


def _dump(record: BaseModel) -> dict[str, Any]:
    return record.model_dump(mode="json", exclude_none=True, by_alias=True)


def _emit_ref(output: str, ref: str, record: BaseModel, table: Callable[[], None]) -> None:
    """`-o ref`, the default of the verbs that answer with one version or run, prints only
    the reference a script captures (NAME@VERSION, MODEL@RUN); any other -o, the record."""
    if output == "ref":
        click.echo(ref)
        return
    emit(_dump(record), output, table=table)


# --- datasets -----------------------------------------------------------------------------


def _dataset_rows(records: list[DatasetRecord]) -> None:
    print_table(
        ["NAME", "VERSION", "PURPOSE", "FILES", "BYTES", "ASSURANCE", "DIGEST"],
        [
            [r.name, r.version, r.purpose, len(r.files), r.total_bytes, r.assurance, r.digest[:19]]
            for r in records
        ],
    )


def _dataset_detail(record: DatasetRecord) -> None:
    from tau.data import layout

    rows = [
        ("Name", record.name),
        ("Version", record.version),
        ("Purpose", record.purpose),
        ("Assurance", record.assurance),
        ("Digest", record.digest),
        ("Files", f"{len(record.files)} ({record.total_bytes} bytes)"),
        ("Location", layout.in_pod(record.prefix) if record.prefix else "-"),
        ("Created", record.created_at),
    ]
    if record.tags:
        rows.append(("Tags", ",".join(f"{k}={v}" for k, v in sorted(record.tags.items()))))
    for label, value in rows:
        click.echo(f"{label + ':':<11}{value}")


def _reference_row(pinned: dict[str, Any]) -> None:
    """`ref -o table`: the pinned version, its recommended mode and where it is mounted."""
    path = pinned["modes"]["durable_mount"]["path"]
    print_table(
        ["NAME", "VERSION", "PURPOSE", "RECOMMENDED", "PATH", "DIGEST"],
        [
            [
                pinned["name"],
                pinned["version"],
                pinned["purpose"],
                pinned["recommended"],
                path or "-",
                pinned["digest"],
            ]
        ],
    )


def _dataset_alias_row(found: DatasetAlias) -> None:
    print_table(
        ["NAME", "ALIAS", "VERSION", "DIGEST", "UPDATED"],
        [[found.name, found.alias, found.version, found.digest, found.updated_at]],
    )


@dataset_app.command("list", help="List registered dataset versions.")
def dataset_list(
    ctx: typer.Context,
    purpose: str = typer.Option("", "--purpose", help="Only pretrain, rl or eval datasets."),
    tag: list[str] = TAGS,
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets
    from tau.data.records import PURPOSES

    check_output(output)
    if purpose and purpose not in PURPOSES:
        raise UsageError("--purpose must be one of: pretrain, rl, eval")
    tags = _tags(tag)
    root = _root(ctx, registry, pvc, context, namespace, datasets.SCOPE)
    records, warnings = datasets.list_records(root, purpose=purpose or None, tags=tags)
    _warn(warnings)
    if output != "table":
        return emit([_dump(r) for r in records], output)
    if not records:
        click.echo(f"No datasets registered in {root.label}")
        return
    _dataset_rows(records)


@dataset_app.command(
    "show", help="Show one dataset version: NAME (alias latest), NAME@VERSION or NAME@ALIAS."
)
def dataset_show(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="NAME[@VERSION|@ALIAS]"),
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets
    from tau.data.refs import parse_dataset

    check_output(output)
    parsed = parse_dataset(ref)
    record = datasets.resolve(_root(ctx, registry, pvc, context, namespace, datasets.SCOPE), parsed)
    if output != "table":
        return emit(_dump(record), output)
    _dataset_detail(record)


@dataset_app.command(
    "ref",
    help="Resolve a dataset to the pinned reference a run consumes (name@version, digest, "
    "mount path). -o env prints shell lines.",
)
def dataset_ref(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="NAME[@VERSION|@ALIAS]"),
    output: str = output_option("json", env="shell lines"),
    env_prefix: str = typer.Option(
        "", "--env-prefix", help="Variable prefix for -o env (default: NAME_DATASET)."
    ),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets
    from tau.data.refs import parse_dataset

    check_output(output, "env")
    if env_prefix and output != "env":
        raise UsageError("--env-prefix applies to -o env")
    parsed = parse_dataset(ref)
    record = datasets.resolve(_root(ctx, registry, pvc, context, namespace, datasets.SCOPE), parsed)
    if output == "env":
        for line in datasets.env_lines(record, env_prefix or datasets.env_prefix(record.name)):
            click.echo(line)
        return
    pinned = datasets.reference(record)
    emit(pinned, output, table=lambda: _reference_row(pinned))


@dataset_alias_app.command("set", help="Point NAME:ALIAS at VERSION (optionally compare-and-swap).")
def dataset_alias_set(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME"),
    alias: str = typer.Argument(..., metavar="ALIAS"),
    version: str = typer.Argument(..., metavar="VERSION"),
    expect: str = typer.Option("", "--expect", help="Only if the alias points at this version."),
    expect_absent: bool = typer.Option(False, "--expect-absent", help="Only if it is unset."),
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets
    from tau.data.refs import segment
    from tau.data.refs import version as check_version

    check_output(output)
    segment("dataset name", name)
    segment("alias", alias)
    check_version(version)
    root = _root(ctx, registry, pvc, context, namespace, datasets.SCOPE)
    moved = datasets.set_alias(
        root, name, alias, version, expect=expect or None, expect_absent=expect_absent
    )
    if output != "table":
        return emit(_dump(moved), output)
    click.echo(f"{moved.name}:{moved.alias} -> {moved.version}")


@dataset_alias_app.command("get", help="Print the version NAME:ALIAS points at.")
def dataset_alias_get(
    ctx: typer.Context,
    name: str = typer.Argument(..., metavar="NAME"),
    alias: str = typer.Argument(..., metavar="ALIAS"),
    output: str = output_option("ref", ref="NAME@VERSION"),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets

    check_output(output, "ref")
    found = datasets.get_alias(
        _root(ctx, registry, pvc, context, namespace, datasets.SCOPE), name, alias
    )
    _emit_ref(output, f"{found.name}@{found.version}", found, lambda: _dataset_alias_row(found))


@dataset_app.command(
    "verify",
    help="Re-hash a version's bytes (its recorded location, or --from) and compare every file "
    "with the record. Exits 1 when anything differs.",
)
def dataset_verify(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="NAME@VERSION"),
    source: str = typer.Option("", "--from", help="Verify a copy at this /data path instead."),
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets, layout
    from tau.data.refs import exact_version

    check_output(output)
    name, version = exact_version(ref, "verify")
    where = layout.on_root(source) if source else ""
    root = _root(ctx, registry, pvc, context, namespace, datasets.SCOPE)
    result = datasets.verify(root, name, version, source=where)
    if output != "table":
        emit(result, output)
    else:
        rows = [[f["path"], f["status"]] for f in result["files"] + result["unexpected"]]
        print_table(["FILE", "STATUS"], rows)
        verdict = "verified" if result["ok"] else "FAILED"
        click.echo(f"{name}@{version} {verdict} at {result['location']} ({result['digest']})")
    if not result["ok"]:
        bad = [f for f in result["files"] if f["status"] != "ok"]
        raise RuntimeFailure(
            f"{name}@{version} does not match its record at {result['location']} "
            f"({len(bad)} of {len(result['files'])} files differ)",
            owner="researcher (dataset registry)",
        )


@dataset_app.command(
    "register",
    help="Register an immutable dataset version from files on the data PVC (--from: hashed, "
    "assurance verified) or from a file list (--manifest: assurance manifest-supplied). "
    "Never overwrites; only aliases move.",
)
def dataset_register(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="NAME@VERSION"),
    purpose: str = typer.Option(..., "--purpose", help="pretrain, rl or eval."),
    source_dir: str = typer.Option("", "--from", help="Directory on the data PVC to hash."),
    manifest: Path | None = typer.Option(
        None, "--manifest", help="Local JSON/YAML {files[], source, components}."
    ),
    prefix: str = typer.Option(
        "",
        "--prefix",
        help="Where the bytes live on the data PVC (default: --from, else "
        "/data/datasets/NAME/VERSION, where ingest puts them).",
    ),
    assurance: str = typer.Option(
        "", "--assurance", help="verified, manifest-supplied or trusted (default by source)."
    ),
    tokenizer: str = typer.Option("", "--tokenizer", help="pretrain: tokenizer id."),
    shard_format: str = typer.Option(
        "tokenized-bin-uint16", "--format", help="pretrain: shard format."
    ),
    sequence_packing: bool = typer.Option(
        False, "--sequence-packing", help="pretrain: shards are sequence-packed."
    ),
    rl_kind: str = typer.Option("", "--rl-kind", help="rl: prompts, preferences, trajectories."),
    rl_policy_run: str = typer.Option("", "--rl-policy-run", help="rl: producing policy run."),
    rl_reward_model: str = typer.Option("", "--rl-reward-model", help="rl: reward model."),
    rl_schema: str = typer.Option("", "--rl-schema", help="rl: record schema id."),
    eval_task: str = typer.Option("", "--eval-task", help="eval: task name."),
    eval_split: str = typer.Option("", "--eval-split", help="eval: split."),
    eval_metric: str = typer.Option("", "--eval-metric", help="eval: primary metric."),
    source_kind: str = typer.Option("", "--source-kind", help="Provenance: e.g. huggingface."),
    source_repo: str = typer.Option("", "--source-repo", help="Provenance: repository."),
    source_revision: str = typer.Option("", "--source-revision", help="Provenance: revision."),
    source_config: str = typer.Option("", "--source-config", help="Provenance: config."),
    tag: list[str] = TAGS,
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from click.core import ParameterSource

    from tau.data import datasets, layout
    from tau.data.manifest import load_manifest
    from tau.data.records import ASSURANCES, PURPOSES, DatasetSource
    from tau.data.refs import exact_version

    check_output(output)
    name, version = exact_version(ref, "register")
    if purpose not in PURPOSES:
        raise UsageError("--purpose must be one of: pretrain, rl, eval")
    if bool(source_dir) == bool(manifest):
        raise UsageError("exactly one of --from or --manifest is required")
    if assurance and assurance not in ASSURANCES:
        raise UsageError(f"--assurance must be one of: {', '.join(ASSURANCES)}")
    by_purpose = {
        "pretrain": ("tokenizer", "shard_format", "sequence_packing"),
        "rl": ("rl_kind", "rl_policy_run", "rl_reward_model", "rl_schema"),
        "eval": ("eval_task", "eval_split", "eval_metric"),
    }
    flags = {"shard_format": "format", "sequence_packing": "sequence-packing"}
    for other, params in by_purpose.items():
        if other == purpose:
            continue
        for param in params:
            if ctx.get_parameter_source(param) is ParameterSource.COMMANDLINE:
                shown = flags.get(param, param.replace("_", "-"))
                raise UsageError(f"--{shown} applies to --purpose {other}, not {purpose}")
    source = DatasetSource(
        kind=source_kind or None,
        repo=source_repo or None,
        revision=source_revision or None,
        config=source_config or None,
    )
    components = []
    root = _root(ctx, registry, pvc, context, namespace, datasets.SCOPE)
    if manifest is not None:
        supplied = load_manifest(manifest)
        files = supplied.files
        components = supplied.components
        if supplied.source is not None:
            merged = {
                **supplied.source.model_dump(exclude_none=True),
                **source.model_dump(exclude_none=True),
            }
            source = DatasetSource(**merged)
        where = layout.on_root(prefix) if prefix else layout.dataset_bytes(name, version)
        assurance = assurance or "manifest-supplied"
    else:
        where = layout.on_root(source_dir)
        if prefix and layout.on_root(prefix) != where:
            raise UsageError(
                "--prefix must equal --from: registered bytes stay where they were hashed"
            )
        files = datasets.scan(root, where)
        assurance = assurance or "verified"
    registration = datasets.Registration(
        name=name,
        version=version,
        purpose=purpose,
        files=files,
        assurance=assurance,
        prefix=where,
        source=source if source.model_dump(exclude_none=True) else None,
        components=components,
        tags=_tags(tag),
        options=datasets.PurposeOptions(
            tokenizer=tokenizer or None,
            format=shard_format,
            sequence_packing=sequence_packing,
            rl_kind=rl_kind or None,
            rl_policy_run=rl_policy_run or None,
            rl_reward_model=rl_reward_model or None,
            rl_schema=rl_schema or None,
            eval_task=eval_task or None,
            eval_split=eval_split or None,
            eval_metric=eval_metric or None,
        ),
    )
    record = datasets.register(root, datasets.build(registration))
    if output != "table":
        return emit(_dump(record), output)
    click.echo(f"registered {record.name}@{record.version} ({record.digest})")
    click.echo(f"point an alias at it: tau data dataset alias set {name} latest {version}")


@dataset_app.command(
    "rm",
    help="Remove a dataset version's record (refused while an alias points at it). "
    "The bytes on the PVC are not deleted.",
)
def dataset_rm(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="NAME@VERSION"),
    yes: bool = typer.Option(False, "--yes", help="Confirm the removal."),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets, layout
    from tau.data.refs import exact_version

    name, version = exact_version(ref, "rm")
    if not yes:
        raise UsageError(f"refusing to remove {name}@{version} without --yes")
    root = _root(ctx, registry, pvc, context, namespace, datasets.SCOPE)
    record = datasets.remove(root, name, version)
    click.echo(f"removed {name}@{version}")
    if record.prefix:
        click.echo(f"its bytes stay at {layout.in_pod(record.prefix)}")


@dataset_app.command(
    "ingest",
    help="Copy a version's files from a directory on the data PVC into its recorded location, "
    "checking each file against the record. Resumes an interrupted ingest.",
)
def dataset_ingest(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="NAME@VERSION"),
    source: str = typer.Option(..., "--from", help="Directory on the data PVC holding the files."),
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets, layout
    from tau.data.refs import exact_version

    check_output(output)
    name, version = exact_version(ref, "ingest")
    where = layout.on_root(source)
    root = _root(ctx, registry, pvc, context, namespace, datasets.SCOPE)
    state = datasets.ingest(root, name, version, where)
    if output != "table":
        return emit(_dump(state), output)
    click.echo(
        f"{name}@{version} {state.state}: {len(state.completed_files)}/{state.total_files} "
        f"files at {state.destination}"
    )


@dataset_app.command(
    "status", help="Ingest status of a version: registered, ingesting, ready or failed."
)
def dataset_status(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="NAME@VERSION"),
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import datasets
    from tau.data.refs import exact_version

    check_output(output)
    name, version = exact_version(ref, "status")
    state = datasets.status(
        _root(ctx, registry, pvc, context, namespace, datasets.SCOPE), name, version
    )
    if output != "table":
        return emit(_dump(state), output)
    click.echo(
        f"{name}@{version}: {state.state} ({len(state.completed_files)}/{state.total_files} files)"
    )
    if state.error:
        click.echo(f"error: {state.error}")


# --- models -------------------------------------------------------------------------------


def _model_rows(rows: list[ModelRecord], metric: str) -> None:
    from tau.data.models import metric_value

    table = []
    for row in rows:
        value = metric_value(row, metric or None)
        artifact: dict[str, Any] = next(
            (a for a in row.artifacts if a.get("name") == "checkpoint"), {}
        )
        table.append(
            [
                row.model,
                row.run,
                "-" if value is None else f"{value:g}",
                row.primary_metric.direction or "-",
                ",".join(f"{k}={v}" for k, v in sorted(row.tags.items())) or "-",
                artifact.get("status", "-"),
            ]
        )
    print_table(
        ["MODEL", "RUN", f"METRIC({metric or 'primary'})", "DIRECTION", "TAGS", "CHECKPOINT"], table
    )


def _model_alias_row(found: ModelAlias) -> None:
    print_table(
        ["MODEL", "ALIAS", "RUN", "UPDATED"],
        [[found.model, found.alias, found.run, found.updated_at]],
    )


@model_app.command("list", help="List indexed model runs, sorted by a metric.")
def model_list(
    ctx: typer.Context,
    model: str = typer.Option("", "--model", help="Only this model's runs."),
    tag: list[str] = TAGS,
    metric: str = typer.Option("", "--metric", help="Show and sort by this metric."),
    sort: str = typer.Option("", "--sort", help="asc or desc (default asc)."),
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import models

    check_output(output)
    if sort and sort not in ("asc", "desc"):
        raise UsageError("--sort must be one of: asc, desc")
    tags = _tags(tag)
    root = _root(ctx, registry, pvc, context, namespace, models.SCOPE)
    rows, warnings = models.list_rows(
        root, model=model or None, tags=tags, metric=metric or None, sort=sort or None
    )
    _warn(warnings)
    if output != "table":
        return emit([_dump(r) for r in rows], output)
    if not rows:
        click.echo(f"No model runs indexed in {root.label}")
        return
    _model_rows(rows, metric)


@model_app.command("show", help="Show a model run's registry row: MODEL/RUN, or RUN.")
def model_show(
    ctx: typer.Context,
    ref: str = typer.Argument(..., metavar="MODEL/RUN|RUN"),
    output: str = output_option("json", summary="same as table"),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import models

    check_output(output, "summary")
    row = models.show(_root(ctx, registry, pvc, context, namespace, models.SCOPE), ref)
    shown = "table" if output == "summary" else output
    emit(_dump(row), shown, table=lambda: _model_rows([row], ""))


@model_app.command(
    "best",
    help="The best run of MODEL by a metric (default: the runs' shared primary metric; "
    "lower for loss-like names). Prints MODEL@RUN.",
)
def model_best(
    ctx: typer.Context,
    model: str = typer.Argument(..., metavar="MODEL"),
    metric: str = typer.Option("", "--metric", help="Metric to optimize."),
    direction: str = typer.Option("", "--direction", help="lower or higher."),
    output: str = output_option("ref", ref="MODEL@RUN"),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import models

    check_output(output, "ref")
    if direction and direction not in models.DIRECTIONS:
        raise UsageError("--direction must be one of: lower, higher")
    root = _root(ctx, registry, pvc, context, namespace, models.SCOPE)
    row = models.best(root, model, metric=metric or None, direction=direction or None)
    _emit_ref(output, f"{row.model}@{row.run}", row, lambda: _model_rows([row], metric))


@model_alias_app.command("set", help="Point MODEL:ALIAS at an indexed RUN.")
def model_alias_set(
    ctx: typer.Context,
    model: str = typer.Argument(..., metavar="MODEL"),
    alias: str = typer.Argument(..., metavar="ALIAS"),
    run: str = typer.Argument(..., metavar="RUN"),
    output: str = output_option("ref", ref="MODEL@RUN"),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import models
    from tau.data.refs import segment

    check_output(output, "ref")
    segment("model", model)
    segment("alias", alias)
    segment("run", run)
    root = _root(ctx, registry, pvc, context, namespace, models.SCOPE)
    moved = models.set_alias(root, model, alias, run)
    _emit_ref(output, f"{moved.model}@{moved.run}", moved, lambda: _model_alias_row(moved))


@model_alias_app.command("get", help="Print the run MODEL:ALIAS points at (MODEL@RUN).")
def model_alias_get(
    ctx: typer.Context,
    model: str = typer.Argument(..., metavar="MODEL"),
    alias: str = typer.Argument(..., metavar="ALIAS"),
    output: str = output_option("ref", ref="MODEL@RUN"),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import models

    check_output(output, "ref")
    found = models.get_alias(
        _root(ctx, registry, pvc, context, namespace, models.SCOPE), model, alias
    )
    _emit_ref(output, f"{found.model}@{found.run}", found, lambda: _model_alias_row(found))


@model_index_app.command(
    "rebuild",
    help="Index finished runs: every /data/checkpoints/{finetunes,workflows}/RUN that left "
    "model.json, metrics.json or artifacts.json becomes a registry row.",
)
def model_index_rebuild(
    ctx: typer.Context,
    model: str = typer.Option(
        "",
        "--model",
        help="File the runs under this model name (default: the run's model.json, else unknown).",
    ),
    run: str = typer.Option("", "--run", help="Only this run."),
    output: str = output_option(),
    registry: str = REGISTRY,
    pvc: str = PVC,
    namespace: str = namespace_option(),
    context: str = context_option(),
) -> None:
    from tau.data import models

    check_output(output)
    root = _root(ctx, registry, pvc, context, namespace, models.REBUILD_SCOPE)
    where = getattr(root, "namespace", None)
    rows, warnings = models.rebuild(root, model=model or None, run=run or None, namespace=where)
    _warn(warnings)
    if output != "table":
        return emit([_dump(r) for r in rows], output)
    click.echo(f"indexed {len(rows)} model run(s)")

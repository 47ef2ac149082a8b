"""`taugrid-portal experiment offload metrics`: the metrics offload sidecar's command.

Flags → `tau.evidence.offload` → print. Every flag also reads its `TAU_METRICS_OFFLOAD_*`
variable so a pod spec can configure it through env; SIGTERM and SIGINT start the bounded
shutdown (wait for the completion file, drain, write the terminal marker) instead of
killing the process mid-write.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import click

from tau import keys
from tau.cli.output import dump_json, print_table
from tau.errors import UsageError


def _duration(value: str, flag: str) -> float:
    from tau.runconfig.durations import parse_duration

    try:
        seconds = parse_duration(value)
    except ValueError:
        seconds = -1.0
    if seconds < 0:
        raise UsageError(f"{flag} {value!r} is not a duration (for example 500ms, 10s, 1m)")
    return seconds


def _tags(values: tuple[str, ...], env_text: str) -> dict[str, str]:
    """`--tag k=v` pairs over TAU_METRICS_OFFLOAD_TAGS (a JSON object or `k=v,k2=v2`)."""
    tags: dict[str, str] = {}
    text = env_text.strip()
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError as error:
            raise UsageError(
                f"{keys.ENV_METRICS_OFFLOAD_TAGS} is not a JSON object ({error})"
            ) from None
        if not isinstance(parsed, dict):
            raise UsageError(f"{keys.ENV_METRICS_OFFLOAD_TAGS} must be a JSON object of strings")
        tags.update({str(k): str(v) for k, v in parsed.items()})
    elif text:
        values = (*[part for part in text.split(",") if part.strip()], *values)
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--tag {item!r} must be KEY=VALUE")
        tags[key.strip()] = value
    return tags


def _history(values: tuple[str, ...], env_text: str) -> tuple[str, ...]:
    if values:
        return values
    return tuple(part.strip() for part in env_text.replace("\n", ",").split(",") if part.strip())


def _optional_path(value: str) -> Path | None:
    return Path(value) if value else None


@click.group(help="Offload run evidence into the store (used by the run's sidecar).")
def offload() -> None:
    pass


@offload.command(
    "metrics",
    help=(
        "Tail a run's JSONL history into the store: one pass, or --watch until the run's "
        "completion file appears; then write the terminal tau/run_status point."
    ),
)
@click.option(
    "--out", envvar=keys.ENV_METRICS_OFFLOAD_OUT, required=True, help="Offloader working directory."
)
@click.option("--history", multiple=True, help="JSONL file or glob (repeatable).")
@click.option(
    "--run", "run_name", envvar=keys.ENV_METRICS_OFFLOAD_RUN, required=True, help="Run name."
)
@click.option("--project", envvar=keys.ENV_METRICS_OFFLOAD_PROJECT, required=True)
@click.option(
    "--experiment", envvar=keys.ENV_METRICS_OFFLOAD_EXPERIMENT, default="", help="Default: --group."
)
@click.option(
    "--group", envvar=keys.ENV_METRICS_OFFLOAD_GROUP, default="default", show_default=True
)
@click.option(
    "--source", envvar=keys.ENV_METRICS_OFFLOAD_SOURCE, default="stellar-online", show_default=True
)
@click.option("--tag", "tags", multiple=True, help="KEY=VALUE on every point (repeatable).")
@click.option("--completion-file", envvar=keys.ENV_METRICS_OFFLOAD_COMPLETION_FILE, default="")
@click.option("--ready-file", default="", help="Written once the offloader is recording.")
@click.option("--done-file", default="", help="Written once the terminal marker is durable.")
@click.option("--status-artifact-uri", envvar=keys.ENV_METRICS_OFFLOAD_ARTIFACT_URI, default="")
@click.option("--status-checkpoint-uri", envvar=keys.ENV_METRICS_OFFLOAD_CHECKPOINT_URI, default="")
@click.option(
    "--interval", envvar=keys.ENV_METRICS_OFFLOAD_INTERVAL, default="1m", show_default=True
)
@click.option(
    "--shutdown-wait",
    default="2m",
    show_default=True,
    help="After SIGTERM, how long to wait for the completion file.",
)
@click.option(
    "--baseline-existing-history",
    is_flag=True,
    help="On first start, skip rows that already exist (an earlier attempt's).",
)
@click.option("--watch", is_flag=True, help="Keep tailing until the run completes.")
@click.option("--max-iterations", type=int, default=0, help="Stop after N steps (testing).")
@click.option("--submission-id", default="", help="The attempt's submission id.")
@click.option("--attempt", type=int, default=None, help="Retry attempt number, when retried.")
@click.option("--namespace", default="")
@click.option("--workspace", default="")
@click.option("--kind", default="", type=click.Choice(["", "Job", "RayJob"]))
@click.option("--config-hash", default="")
@click.option("--code-sha", default="")
@click.option("--image-digest", default="")
@click.option("--tau-command", default="")
@click.option("--result-uri", default="")
@click.option("--pod", envvar=keys.ENV_POD_NAME, default="")
@click.option("--node", envvar=keys.ENV_NODE_NAME, default="")
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table")
@click.pass_context
def metrics(ctx: click.Context, /, **opts: Any) -> None:
    import os

    from tau.evidence.cluster_runs import ClusterRun
    from tau.evidence.offload import OffloadConfig, Offloader
    from tau.portal.cli.experiment import store_path

    history = _history(opts["history"], os.environ.get(keys.ENV_METRICS_HISTORY, ""))
    if not history:
        raise UsageError(f"offload metrics needs --history (or {keys.ENV_METRICS_HISTORY})")
    group = opts["group"] or "default"
    run = ClusterRun(
        name=opts["run_name"],
        project=opts["project"],
        experiment_id=opts["experiment"] or group,
        group=group,
        submission_id=opts["submission_id"],
        attempt=opts["attempt"],
        namespace=opts["namespace"],
        workspace=opts["workspace"],
        kind=opts["kind"],
        config_hash=opts["config_hash"],
        code_sha=opts["code_sha"],
        image_digest=opts["image_digest"],
        tau_command=opts["tau_command"],
        result_uri=opts["result_uri"],
        pod=opts["pod"],
        node=opts["node"],
    )
    config = OffloadConfig(
        store=store_path(ctx),
        out=Path(opts["out"]),
        history=history,
        run=run,
        source=opts["source"],
        tags=_tags(opts["tags"], os.environ.get(keys.ENV_METRICS_OFFLOAD_TAGS, "")),
        completion_file=_optional_path(opts["completion_file"]),
        ready_file=_optional_path(opts["ready_file"]),
        done_file=_optional_path(opts["done_file"]),
        interval=_duration(opts["interval"], "--interval"),
        baseline_existing_history=opts["baseline_existing_history"],
        status_artifact_uri=opts["status_artifact_uri"],
        status_checkpoint_uri=opts["status_checkpoint_uri"],
        shutdown_wait=_duration(opts["shutdown_wait"], "--shutdown-wait"),
    )
    offloader = Offloader(config, say=lambda line: click.echo(line, err=True))
    if opts["watch"]:
        stop = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        result = offloader.watch(stop, max_iterations=opts["max_iterations"])
    else:
        result = offloader.run_once()
    if opts["output"] == "json":
        sys.stdout.write(dump_json(result) + "\n")
    else:
        print_table(
            ["run", "points", "files", "state", "store"],
            [[result[k] for k in ("run_id", "points", "files", "state", "store")]],
        )

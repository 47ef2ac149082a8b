"""`tau python submit` / `submit-build`: hand a build to `tau run --config`, in lineage order.

Every workload is submitted by the `tau` CLI (`$TAU_BINARY`, else `tau` on PATH), which
resolves the workspace, renders and creates it; the SDK only sequences. An eval that runs
`after` a train of the same build is submitted once that train has succeeded, so its
upstream checkpoint exists.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau import keys
from tau.errors import RuntimeFailure, UsageError
from tau.sdk.build import Overrides, build, read_build
from tau.sdk.delegate import capture_tau, run_tau

POLL_SECONDS = 10.0


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def refuse_inside_a_workload() -> None:
    if os.environ.get(keys.ENV_DATA_DIR):
        raise UsageError(
            f"tau python submit runs where the researcher works; this process is inside a "
            f"TauGrid workload ({keys.ENV_DATA_DIR} is set)",
            hint="submit from a workstation or CI, not from a running job",
        )


def submit_build(
    directory: Path,
    *,
    dry_run: str = "",
    context: str = "",
    timeout: float = 24 * 3600,
    say: Callable[[str], None] = _stderr,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    refuse_inside_a_workload()
    if dry_run and dry_run not in ("client", "server"):
        raise UsageError("--dry-run must be one of: client, server")
    artifact = read_build(directory)
    workloads = artifact["workloads"]
    awaited = {w["after"] for w in workloads if w.get("after")}
    for index, workload in enumerate(workloads):
        if index and dry_run == "client":
            sys.stdout.write("---\n")  # one multi-document stream of every rendered workload
            sys.stdout.flush()
        args = ["run", "--config", str(Path(directory) / workload["config"])]
        if dry_run:
            args.append(f"--dry-run={dry_run}")
        if context:
            args += ["--context", context]
        say(f"tau python: submitting {workload['kind']} {workload['name']}")
        code = run_tau(args)
        if code:
            return code
        if workload["name"] in awaited and not dry_run:
            wait_for_success(workload, context=context, timeout=timeout, say=say, sleep=sleep)
    return 0


def wait_for_success(
    workload: dict[str, Any], *, context: str, timeout: float, say: Callable[[str], None],
    sleep: Callable[[float], None],
) -> None:  # fmt: skip
    """Poll `tau run status` until the train run succeeded (its evals depend on it)."""
    name = workload["resource_name"]
    args = ["run", "status", name, "-o", "json"]
    if workload.get("namespace"):
        args += ["-n", workload["namespace"]]
    if context:
        args += ["--context", context]
    say(f"tau python: waiting for {name} to succeed before its evals")
    deadline = time.monotonic() + timeout
    while True:
        result = capture_tau(args)
        state = ""
        if result.returncode == 0:
            state = (json.loads(result.stdout).get("status") or {}).get("state", "")
        if state == "succeeded":
            return
        if state == "failed":
            raise RuntimeFailure(
                f"{name} failed; its evals were not submitted",
                hint=f"see `tau run status {name}`",
                owner="researcher",
            )
        if time.monotonic() >= deadline:
            raise RuntimeFailure(f"{name} did not finish within {timeout:g}s; evals not submitted")
        sleep(POLL_SECONDS)


def submit_module(
    source: Path,
    *,
    overrides: Overrides = Overrides(),
    dry_run: str = "",
    context: str = "",
    say: Callable[[str], None] = _stderr,
) -> int:
    refuse_inside_a_workload()
    directory = build_directory(source)
    build(source, directory, overrides)
    return submit_build(directory, dry_run=dry_run, context=context, say=say)


def build_directory(source: Path) -> Path:
    """Where `submit` builds: beside the module, so `tau run` finds the repository's
    workspace connection from the manifests' location."""
    source = Path(source)
    return source.resolve().parent / ".tau" / "python-build" / source.stem

"""Put a finished local run into the local experiment store, under the run's name.

`tau.stellar` in the target already synced its metrics into the same store under the same
run name (the engine sets TAU_RUN_NAME and TAU_EXP_STORE), so this merges the record the
engine knows — state, times, config hash, code sha, command, outputs — plus any
`metrics.history` JSONL into that one run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tau.engine.plan import LocalPlan
from tau.engine.records import CANCELLED, FAILED, SUCCEEDED, LocalRun
from tau.errors import TauError
from tau.jsontypes import JSONObject

if TYPE_CHECKING:
    from tau.evidence import RunRecord

# Fields tau.stellar may already have stored differently, least important dropped first.
_IDENTITY = {"project": "", "experiment_id": "", "run_group_id": ""}
# RunRecord string fields blanked by dataclasses.replace.
_FALLBACKS: tuple[dict[str, Any], ...] = (
    {"config_hash": ""},
    {"config_hash": "", **_IDENTITY},
    {"config_hash": "", "code_sha": "", **_IDENTITY},
)
STORE_STATES = {SUCCEEDED: "succeeded", FAILED: "failed", CANCELLED: "cancelled"}


def record_evidence(run: LocalRun, plan: LocalPlan, *, echo: Callable[[str], None]) -> JSONObject:
    try:
        from tau.evidence import RunRecord, ingest_run
    except ImportError as error:  # the portal extra (pyarrow) is not installed
        echo(f"warning: evidence not recorded ({error}); install taugrid[portal]")
        return {"store": run.store, "error": str(error)}
    experiment = plan.intent.experiment
    record = RunRecord(
        run_id=run.name,
        project=experiment.project or "",
        experiment_id=experiment.experiment_id or "",
        run_group_id=experiment.group or "",
        state=STORE_STATES.get(run.state, run.state),
        created_at=run.created_at,
        started_at=run.started_at,
        completed_at=run.finished_at,
        config_hash=run.config_hash,
        code_sha=run.code_sha,
        tau_command=run.tau_command,
        result_uri=run.output_dir,
        tags={"engine": "local", "config-hash": run.config_hash, "code-sha": run.code_sha},
    )
    try:
        result = _ingest(ingest_run, run, plan, record)
    except (TauError, ImportError) as error:
        message = error.one_line() if isinstance(error, TauError) else str(error)
        echo(f"warning: evidence for {run.name} not recorded in {run.store}: {message}")
        return {"store": run.store, "error": message}
    return {"store": run.store, "run_id": result["run_id"], **result}


def _ingest(
    ingest_run: Callable[..., JSONObject], run: LocalRun, plan: LocalPlan, record: RunRecord
) -> JSONObject:
    """Merge into the run tau.stellar created; its own identity fields win on conflict.

    tau.stellar stores the hash of the training config it was given as the run's
    config_hash; the run config's hash then stays in the `config-hash` tag.
    """
    experiment = plan.intent.experiment.experiment_id or ""

    def call(rec: RunRecord) -> JSONObject:
        return ingest_run(
            run.store,
            rec,
            metrics_jsonl=list(plan.metrics_history),
            outputs_dir=plan.output_dir,
            experiment=experiment,
        )

    candidates = [record, *(replace(record, **blank) for blank in _FALLBACKS)]
    for candidate in candidates[:-1]:
        try:
            return call(candidate)
        except TauError as error:
            if "already exists with different" not in str(error):
                raise
    return call(candidates[-1])

"""One call for an engine that finished a run: record it, its metrics and its outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tau.evidence import publish, records
from tau.evidence.jsonl import ImportRequest, import_jsonl
from tau.evidence.store import Store


def ingest_run(
    store: Path | str,
    run_record: records.RunRecord,
    metrics_jsonl: list[Path | str] | None = None,
    outputs_dir: Path | str | None = None,
    *,
    experiment: str = "",
    source: str = "tau-engine",
) -> dict[str, Any]:
    """Make the store hold `run_record`, its JSONL metric history and its output files.

    Creates the store when missing. Outputs: every completed staged publication under
    `outputs_dir/.tau-artifacts/`, else every regular file directly in `outputs_dir`, is
    recorded as an `output` artifact by path. Safe to call again with the same inputs.
    """
    root = Path(store)
    handle = Store.create(root, project=run_record.project, experiment_id=experiment)
    run = run_record.resolved(handle)
    if experiment:
        run.experiment_id = run.experiment_id or experiment
    outputs = _output_specs(Path(outputs_dir)) if outputs_dir else []
    with handle.mutate() as txn:
        created = records.upsert_run(txn, run)
        rows = [records.artifact_row(run.run_id, spec) for spec in outputs]
        added = sum(records.record_artifact(txn, row) for row in rows)
    result: dict[str, Any] = {
        "run_id": run.run_id,
        "run_created": created,
        "artifacts_added": added,
    }
    history = [str(p) for p in metrics_jsonl or [] if Path(p).is_file() and Path(p).stat().st_size]
    if history:
        imported = import_jsonl(
            root,
            ImportRequest(
                run_id=run.run_id,
                history=history,
                project=run.project,
                experiment=run.experiment_id,
                group=run.run_group_id,
                owner=run.owner,
                state=run.state,
                source=source,
            ),
        )
        result.update(metric_rows=imported["rows"], metrics_reused=imported["reused"])
    return result


def _output_specs(outputs_dir: Path) -> list[dict[str, Any]]:
    publications = publish.completed_publications(outputs_dir)
    if publications:
        return [
            {
                "uri": str(pub.path / name),
                "name": name,
                "direction": "output",
                "preview": {"kind": "staged_output", "publication": pub.publication_id},
            }
            for pub in publications
            for name in pub.files
        ]
    if not outputs_dir.is_dir():
        return []
    return [
        {"uri": str(path), "name": path.name, "direction": "output"}
        for path in sorted(outputs_dir.iterdir())
        if path.is_file() and not path.name.startswith(".")
    ]

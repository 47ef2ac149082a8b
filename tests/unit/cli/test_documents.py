"""The `-o json|yaml` documents of `tau run` read verbs are their models, key for key.

Each recorded cluster outcome (KWOK pods, a real Kueue) is pushed through the model the CLI
prints it with: the dump must equal what tau/lifecycle built, so a model never drops, renames
or invents a key, and a key a producer adds without declaring it is refused. The model's JSON
Schema is the contract a script can check a printed document against.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from tau.cli.documents import RunHistory, RunList, RunResults, RunStatus
from tau.cli.output import dump_json, dump_yaml
from tau.connection import Target
from tau.lifecycle import status as st
from tau.lifecycle.history import history
from tau.lifecycle.snapshot import Snapshot
from tests.unit.lifecycle.conftest import RECORDED, recorded

TARGET = Target("/home/r/.config/tau/kubeconfigs/research.yaml", "research", "research")
CONNECTED = Target("/k/research.yaml", "research-cluster", "research", "ml", "connection", "sys")
OUTCOMES = sorted(p.stem for p in RECORDED.glob("*.json"))


def _roundtrip(document: dict[str, object]) -> dict[str, object]:
    return json.loads(json.dumps(document, default=str))


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_the_status_model_dumps_the_lifecycle_document_unchanged(outcome: str) -> None:
    doc = st.document(recorded(outcome), TARGET)

    assert RunStatus.model_validate(doc).dump() == _roundtrip(doc)


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_the_history_model_dumps_the_lifecycle_document_unchanged(outcome: str) -> None:
    doc = history(recorded(outcome), [])

    assert RunHistory.model_validate(doc).dump() == _roundtrip(doc)


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_the_printed_documents_validate_against_their_json_schemas(outcome: str) -> None:
    status = RunStatus.model_validate(st.document(recorded(outcome), TARGET)).dump()
    past = RunHistory.model_validate(history(recorded(outcome), [])).dump()

    jsonschema.validate(status, RunStatus.model_json_schema(mode="serialization"))
    jsonschema.validate(past, RunHistory.model_json_schema(mode="serialization"))


def test_a_missing_run_and_a_connected_workspace_print_commands_the_schema_declares() -> None:
    missing = st.document(Snapshot.from_dict({"name": "gone", "namespace": "research"}), TARGET)
    waiting = st.document(recorded("over-quota"), CONNECTED)
    schema = RunStatus.model_json_schema(mode="serialization")

    for doc in (missing, waiting):
        dumped = RunStatus.model_validate(doc).dump()
        assert dumped == _roundtrip(doc)
        jsonschema.validate(dumped, schema)
    commands = [
        c for d in (missing, waiting) for x in d["diagnostics"] for c in x.get("commands", [])
    ]
    assert {c["argv"][1] for c in commands} == {"run", "workspace"}


def _tau_event(run: str, reason: str, message: str, at: str) -> dict[str, object]:
    """An Event as `tau run` records a retry or a resume (tau/lifecycle/retry.py)."""
    return {
        "involvedObject": {"kind": "Job", "name": run},
        "reason": reason,
        "message": message,
        "reportingComponent": "tau-cli",
        "lastTimestamp": at,
    }


def test_a_history_with_a_retry_and_a_resume_is_its_model_key_for_key() -> None:
    snap = recorded("preempted")
    events = [
        _tau_event(snap.name, "RayJobAttempt", "attempt=1/3 failure=preempted", "T1"),
        _tau_event(snap.name, "RunResumed", "resumed_after=preempted checkpoint=none", "T2"),
    ]
    doc = history(snap, events)
    dumped = RunHistory.model_validate(doc).dump()

    assert [e["event"] for e in dumped["entries"]] == ["retry", "resume"]
    assert dumped == _roundtrip(doc)
    jsonschema.validate(dumped, RunHistory.model_json_schema(mode="serialization"))


def test_a_schema_refuses_a_document_with_a_key_it_does_not_declare() -> None:
    listing = {"namespace": "n", "total": 0, "runs": [{"name": "a", "surprise": 1}]}

    with pytest.raises(jsonschema.ValidationError, match="surprise"):
        jsonschema.validate(listing, RunList.model_json_schema(mode="serialization"))


def test_json_and_yaml_print_the_same_status_document() -> None:
    dumped = RunStatus.model_validate(st.document(recorded("over-quota"), TARGET)).dump()

    assert yaml.safe_load(dump_yaml(dumped)) == json.loads(dump_json(dumped))


def test_an_undeclared_key_is_refused_rather_than_printed() -> None:
    with pytest.raises(ValidationError, match="extra"):
        RunList.model_validate({"namespace": "n", "total": 0, "runs": [], "surprise": 1})


def test_a_key_the_producer_omits_stays_omitted() -> None:
    listing = {"path": "/data/out", "pvc": "", "entries": ["a"]}

    assert RunResults.model_validate(listing).dump() == listing


@pytest.mark.parametrize("model", [RunList, RunHistory, RunResults, RunStatus])
def test_each_document_has_a_json_schema_with_its_camel_case_keys(model: type) -> None:
    schema = model.model_json_schema(by_alias=True)

    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert all("_" not in key for key in schema["properties"])

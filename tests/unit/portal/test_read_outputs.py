"""Every `taugrid-portal experiment` read verb prints one document in json and yaml alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tau.cli.main import run as run_cli
from tau.portal.cli.main import cli

READS = {
    "experiments search": ("experiments", "search"),
    "list": ("list", "--kind", "groups"),
    "search": ("search", "--project", "demo"),
    "status": ("status", "demo"),
    "compare": ("compare", "demo", "--metric", "train/loss"),
    "sql": ("sql", "SELECT run_id, run_group_id FROM runs ORDER BY run_id"),
}


def _read(capsys: pytest.CaptureFixture[str], store: Path, argv: tuple[str, ...], fmt: str) -> str:
    code = run_cli(cli, "taugrid-portal", ["experiment", "--store", str(store), *argv, "-o", fmt])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


@pytest.mark.parametrize("verb", READS)
def test_yaml_parses_to_the_json_document(
    capsys: pytest.CaptureFixture[str], demo_store: Path, verb: str
) -> None:
    as_json = json.loads(_read(capsys, demo_store, READS[verb], "json"))
    as_yaml = yaml.safe_load(_read(capsys, demo_store, READS[verb], "yaml"))

    assert as_json and as_yaml == as_json

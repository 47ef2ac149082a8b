"""`taugrid-portal experiment offload metrics`: flags, env configuration and usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.cli.main import run as run_cli
from tau.portal.cli.main import cli


def portal(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, "taugrid-portal", list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_pod_can_configure_the_offloader_through_env(capsys, tmp_path: Path, monkeypatch):
    history = tmp_path / "metrics-history-attempt-0"
    history.mkdir()
    (history / "chunk-000000.jsonl").write_text(
        json.dumps({"_step": 0, "_timestamp": 1760000000.125, "loss": 1.0}) + "\n"
    )
    for name, value in {
        "TAU_EXP_STORE": str(tmp_path / "store"),
        "TAU_METRICS_OFFLOAD_OUT": str(tmp_path / "out"),
        "TAU_METRICS_HISTORY": f"{history}/*.jsonl",
        "TAU_METRICS_OFFLOAD_RUN": "portal-ray-stellar",
        "TAU_METRICS_OFFLOAD_PROJECT": "portal-demo",
        "TAU_METRICS_OFFLOAD_EXPERIMENT": "ray-plus-stellar",
        "TAU_METRICS_OFFLOAD_TAGS": "team=vision,split=train",
    }.items():
        monkeypatch.setenv(name, value)
    code, out, err = portal(capsys, "experiment", "offload", "metrics", "-o", "json")
    assert code == 0, err
    assert json.loads(out) | {"store": ""} == {
        "run_id": "portal-ray-stellar",
        "points": 1,
        "files": 1,
        "state": "running",
        "store": "",
    }
    code, out, _ = portal(capsys, "experiment", "search", "--tag", "team=vision", "-o", "json")
    assert [r["experiment_id"] for r in json.loads(out)["runs"]] == ["ray-plus-stellar"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "offload metrics needs --history"),
        (("--history", "h.jsonl", "--interval", "soon"), "--interval 'soon' is not a duration"),
        (("--history", "h.jsonl", "--tag", "novalue"), "--tag 'novalue' must be KEY=VALUE"),
    ],
)
def test_usage_errors_are_one_line(capsys, tmp_path: Path, extra, message) -> None:
    base = ("experiment", "--store", str(tmp_path / "s"), "offload", "metrics")
    args = (*base, "--out", str(tmp_path / "o"), "--run", "r", "--project", "p", *extra)
    code, out, err = portal(capsys, *args)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err

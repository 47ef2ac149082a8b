"""One backend per command, chosen from --local or the run itself; the CLI never routes."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tau.engine import records
from tau.run.backend import Route
from tau.run.cluster import ClusterBackend
from tau.run.local import LocalBackend
from tau.run.select import select

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def local_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TAU_LOCAL_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def test_local_selects_the_local_engine_and_keeps_its_data_root() -> None:
    chosen = select("train-x1", local=True, route=Route(), data_root="/srv/data")
    assert isinstance(chosen, LocalBackend) and chosen.data_root == "/srv/data"


def test_a_name_that_is_a_local_run_record_selects_the_local_engine() -> None:
    record = records.run_dir("train-20261201-000000") / records.RECORD
    record.parent.mkdir(parents=True)
    record.write_text("{}")
    assert isinstance(select("train-20261201-000000", local=False, route=Route()), LocalBackend)


def test_any_other_run_is_the_clusters_and_choosing_contacts_nothing() -> None:
    route = Route(context="aks-prod", namespace="research")
    chosen = select("train-x1", local=False, route=route)
    assert isinstance(chosen, ClusterBackend) and chosen.route == route
    assert isinstance(select(None, local=False, route=Route()), ClusterBackend)


def test_the_local_backend_and_the_planner_never_load_the_kubernetes_client() -> None:
    code = (
        "import json, sys\n"
        "import tau.run.backend, tau.run.local, tau.run.plan, tau.run.select\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded = json.loads(result.stdout)
    assert [m for m in loaded if m.split(".")[0] == "kubernetes"] == []
    assert [m for m in loaded if m.startswith(("tau.lifecycle", "tau.kube"))] == []


def test_no_command_module_reaches_an_engine_except_through_a_backend() -> None:
    reached = [
        f"{path.relative_to(REPO)}:{node.lineno}: {node.module}"
        for path in sorted((REPO / "tau/cli").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
        and (node.module or "").startswith(("tau.engine", "tau.run.local", "tau.run.cluster"))
    ]
    assert reached == []


def test_a_local_run_that_loses_its_planned_name_to_a_concurrent_start_is_planned_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tau.resolve.layers import Overrides
    from tau.run.backend import Terminal
    from tau.run.plan import Mode, plan
    from tau.runconfig import load

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    monkeypatch.delenv("TAU_EXP_STORE", raising=False)
    planned = plan(load(REPO / "examples/quickstart/tau/train.yaml"), Overrides(), Mode.LOCAL)
    assert records.claim(planned.name)  # another `tau run` of this config, the same second
    said: list[str] = []
    terminal = Terminal(said.append, said.append, print, print, print, print)
    LocalBackend().submit(planned, terminal)
    (run,), broken = records.all_runs()
    assert broken == [] and run.name != planned.name
    assert run.name.startswith("quickstart-train-") and run.state == records.SUCCEEDED

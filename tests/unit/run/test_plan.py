"""`tau.run.plan` is the one way into resolution, whatever the mode."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tau.resolve.layers import Overrides
from tau.run.plan import Mode, local_resolver, plan
from tau.runconfig import load

REPO = Path(__file__).resolve().parents[3]
QUICKSTART = REPO / "examples/quickstart/tau/train.yaml"


@pytest.fixture(autouse=True)
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No connection state of this machine's user decides whether a preview is live."""
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "tau-config"))


def test_an_unconnected_preview_resolves_offline_with_provenance_and_renders() -> None:
    said: list[str] = []
    preview = plan(load(QUICKSTART), Overrides(dry_run="client"), Mode.PREVIEW, say=said.append)
    assert not preview.live
    assert preview.name == "quickstart-train"  # name: in tau/train.yaml
    assert any("could not resolve namespace, queue" in w for w in preview.resolution.warnings)
    settings = {row[0] for row in preview.resolution.provenance.rows()}
    assert {"name", "namespace"} <= settings
    (job,) = preview.objects()
    assert job["kind"] == "Job"
    with pytest.raises(ValueError, match="has no cluster connection"):
        preview.connection()


def test_a_local_plan_drops_the_clusters_placeholder_warnings() -> None:
    local = plan(load(QUICKSTART), Overrides(), Mode.LOCAL)
    assert local.mode is Mode.LOCAL and not local.live
    assert [w for w in local.resolution.warnings if "placeholder" in w] == []


def test_a_local_plan_is_resolved_once_under_the_name_the_run_will_have(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU_LOCAL_STATE_DIR", str(tmp_path / "state"))
    local = plan(load(QUICKSTART), Overrides(), Mode.LOCAL)
    assert re.fullmatch(r"quickstart-train-\d{8}-\d{6}", local.name)
    assert local.resolution.provenance.value_of("name") == local.name
    assert not (tmp_path / "state").exists()  # the engine claims the name when it starts


def test_the_local_engine_resolves_under_the_name_it_reserved() -> None:
    resolve = local_resolver(load(QUICKSTART), ("tau", "run", "train", "--local"))
    resolution = resolve("train-20261201-000000")
    assert resolution.intent.name == "train-20261201-000000"
    assert resolution.intent.provenance.tau_command == ("tau", "run", "train", "--local")


RESOLUTION_ENTRY_POINTS = {
    ("tau.resolve.request", "resolve_request"),
    ("tau.resolve.direct", "resolve_run"),
    ("tau.resolve.workflow", "resolve_workflow"),
    ("tau.lifecycle.submit", "prepare"),
}


def test_no_command_module_reaches_past_the_planner_into_resolution() -> None:
    reached = [
        f"{path.relative_to(REPO)}:{node.lineno}: {node.module}.{alias.name}"
        for path in sorted((REPO / "tau/cli").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if (node.module, alias.name) in RESOLUTION_ENTRY_POINTS
    ]
    assert reached == []

"""`python -m infra.automation`: what it refuses before the engine starts, and what it prints.

The engine itself runs in tests/e2e/test_infra_pulumi_engine.py against the local cluster;
here the checks that need no engine: the environment an operator must provide, stack config
validated as the engine hands it over (text values, structured values as JSON), exit codes,
and secret outputs never printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from infra import automation
from infra.config import MSG_CLUSTER_NAME
from infra.engine import (
    PROJECT_ROOT,
    EngineOptions,
    Outcome,
    check_environment,
    documented_outputs,
    validate,
)
from infra.program import OUTPUT_NAMES
from tau.errors import RuntimeFailure, UsageError, ValidationError

UUID = "33333333-4444-5555-6666-777777777777"


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = automation.run_cli(automation.cli, "python -m infra.automation", list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def engine_values(stack_file: Path) -> dict[str, SimpleNamespace]:
    """A stack file's config the way `stack.get_all_config()` returns it: text values."""
    document = yaml.safe_load(stack_file.read_text())
    out = {}
    for key, value in document["config"].items():
        if isinstance(value, (dict, list)):
            text = json.dumps(value)
        elif isinstance(value, bool):
            text = str(value).lower()
        else:
            text = str(value)
        out[key] = SimpleNamespace(value=text, secret=False)
    return out


@pytest.fixture
def no_passphrase(monkeypatch):
    for name in ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE", "PULUMI_BACKEND_URL"):
        monkeypatch.delenv(name, raising=False)


def test_a_local_backend_without_a_passphrase_is_refused_naming_the_variable(capsys, no_passphrase):
    code, out, err = cli(capsys, "up", "--stack", "dev")
    assert code == 2
    assert out == ""
    [line] = err.splitlines()
    assert line.startswith("error: PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE)")
    assert line.endswith("(owner: platform operator)")


def test_a_work_dir_without_a_project_is_a_usage_error(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "")
    code, _, err = cli(capsys, "preview", "--stack", "dev", "--work-dir", str(tmp_path))
    assert code == 2
    assert f"--work-dir {tmp_path}: no Pulumi.yaml there" in err
    assert "Traceback" not in err


def test_a_missing_pulumi_cli_is_a_runtime_error_naming_the_setup_step(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "")
    with pytest.raises(RuntimeFailure) as caught:
        check_environment(EngineOptions(stack="dev"))
    assert caught.value.exit_code == 1
    assert "pulumi" in caught.value.message and "hack/setup/60-pulumi.sh" in caught.value.hint


def test_a_passphrase_is_not_needed_for_a_non_file_backend(tmp_path, monkeypatch, no_passphrase):
    monkeypatch.setenv("PATH", str(tmp_path))
    opts = EngineOptions(stack="dev", backend_url="https://api.pulumi.com")
    with pytest.raises(RuntimeFailure):  # gets past the passphrase check to the CLI check
        check_environment(opts)


def test_unknown_output_format_is_refused(capsys, monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "")
    code, _, err = cli(capsys, "preview", "--stack", "dev", "-o", "xml")
    assert code == 2
    assert "--output must be" in err


@pytest.mark.parametrize("stack", ["dev", "ci-preview", "aks-cpu", "aks-gpu", "aks-h200"])
def test_committed_stack_config_as_the_engine_hands_it_over_validates(stack):
    values = engine_values(PROJECT_ROOT / "stacks" / f"Pulumi.{stack}.yaml")
    if stack.startswith("aks-"):
        values["taugrid:subscription_id"] = SimpleNamespace(value=UUID, secret=False)
    validate(values, stack)


def test_invalid_stack_config_is_one_usage_error_before_the_engine_runs():
    values = {
        "taugrid:cluster_name": SimpleNamespace(value="9", secret=False),
        "taugrid:kube_context": SimpleNamespace(value="ctx", secret=False),
        "kubernetes:context": SimpleNamespace(value="not ours", secret=False),
    }
    with pytest.raises(ValidationError) as caught:
        validate(values, "lab")
    assert caught.value.exit_code == 2
    assert caught.value.message == f"stack lab: {MSG_CLUSTER_NAME}"


def test_every_problem_is_named_at_once():
    values = {
        "taugrid:cluster_name": SimpleNamespace(value="9", secret=False),
        "taugrid:no_such_key": SimpleNamespace(value="x", secret=False),
    }
    with pytest.raises(ValidationError) as caught:
        validate(values, "lab")
    problems = caught.value.problems
    assert MSG_CLUSTER_NAME in problems
    assert any(problem.startswith("no_such_key") for problem in problems)
    assert caught.value.message == "stack lab: 2 problems in the stack configuration"


def test_secret_outputs_are_masked_and_no_changes_is_said_plainly(capsys):
    outcome = Outcome(
        "up",
        "dev",
        {"same": 4},
        {"cluster_name": "taugrid-local", "kubeconfig": "apiVersion: v1 ...", "adx_endpoint": None},
        frozenset({"kubeconfig"}),
    )
    assert outcome.changed == 0
    automation._report(outcome, "table")
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "up dev: no changes",
        "cluster_name: taugrid-local",
        "kubeconfig: [secret]",
        "adx_endpoint: ",
    ]
    automation._report(outcome, "json")
    document = json.loads(capsys.readouterr().out)
    assert document["outputs"]["kubeconfig"] == "[secret]"
    assert document["changes"] == {"same": 4}


def test_changes_are_counted_by_kind():
    outcome = Outcome("preview", "dev", {"create": 3, "same": 1, "update": 1})
    assert outcome.changed == 4
    assert automation._summary(outcome) == "preview dev: create 3, update 1"


def test_check_environment_order_usage_before_runtime(tmp_path, monkeypatch, no_passphrase):
    """An operator fixes what they typed before installing anything."""
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError):
        check_environment(EngineOptions(stack="dev", work_dir=tmp_path))


def test_outputs_the_engine_drops_for_being_null_are_reported_by_their_documented_names():
    outputs = documented_outputs({"cluster_name": "taugrid-local", "gpu_quota": 0})
    assert list(outputs) == list(OUTPUT_NAMES)
    assert outputs["cluster_name"] == "taugrid-local" and outputs["gpu_quota"] == 0
    assert outputs["adx_endpoint"] is None

"""`tau run` through the real console script: exit codes, messages, schema, reference."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from tau.cli.main import cli, run

ROOT = Path(__file__).parents[3]
TAU = str(Path(sys.executable).parent / "tau")
QUICKSTART = ROOT / "examples" / "quickstart"
EXAMPLES = sorted((ROOT / "examples").glob("*/tau/*.yaml"))
FIXTURES = sorted((ROOT / "tests" / "unit" / "runconfig" / "fixtures").glob("*.yaml"))


def tau(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TAU, *args], cwd=cwd, capture_output=True, text=True, check=False)


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout


def test_validate_accepts_every_example() -> None:
    for example in EXAMPLES:
        result = tau("run", "validate", "--config", str(example.relative_to(ROOT)))
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"{example.relative_to(ROOT)} is valid\n"
        assert result.stderr == ""


def test_validate_resolves_a_named_target_from_the_tau_directory() -> None:
    result = tau("run", "validate", "train", cwd=QUICKSTART)
    assert (result.returncode, result.stdout) == (0, "tau/train.yaml is valid\n")


def test_validate_discovers_tau_yaml(tmp_path: Path) -> None:
    (tmp_path / "tau.yml").write_text("name: t\nengine: job\n")
    result = tau("run", "validate", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "tau.yml is valid\n")


def test_validate_without_any_config_explains_what_to_create(tmp_path: Path) -> None:
    result = tau("run", "validate", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "error: no Tau run config found; create tau.yaml or pass --config\n"


def test_a_path_as_target_points_to_config(tmp_path: Path) -> None:
    result = tau("run", "validate", "tau/train.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert "must be a name, not a path; use --config for explicit paths" in result.stderr


def test_invalid_config_exits_2_with_file_line_column_and_field_path(tmp_path: Path) -> None:
    (tmp_path / "tau.yaml").write_text("name: t\ncompute:\n  wrokers: 1\n")
    result = tau("run", "validate", cwd=tmp_path)
    assert result.returncode == 2
    assert_no_traceback(result)
    assert result.stdout == ""
    assert result.stderr == (
        "error: tau.yaml:3:3: compute.wrokers: field wrokers not found; "
        'did you mean "compute.workers"? (owner: run config author)\n'
    )


def test_every_problem_of_a_file_is_listed_once(tmp_path: Path) -> None:
    (tmp_path / "tau.yaml").write_text("engine: job\ncompute: {gpus: -1, workers: 2}\n")
    result = tau("run", "validate", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("  - tau.yaml:2:") and "compute.gpus must be >= 0" in lines[0]
    assert "engine=job cannot set compute.workers=2" in lines[1]
    assert lines[2].startswith("error: tau.yaml: 2 problems in the run config")


def test_yaml_syntax_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    (tmp_path / "tau.yaml").write_text("name: [unclosed\n")
    result = tau("run", "validate", cwd=tmp_path)
    assert result.returncode == 2
    assert_no_traceback(result)
    assert result.stderr.startswith("error: tau.yaml:2:1: YAML syntax error")


def test_deprecation_warnings_go_to_stderr_and_validation_passes(tmp_path: Path) -> None:
    (tmp_path / "tau.yaml").write_text("name: t\nengine: ray\n")
    result = tau("run", "validate", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout == "tau.yaml is valid\n"
    assert result.stderr == 'warning: tau.yaml:2:1: engine "ray" is deprecated; use "rayjob"\n'


def test_validate_rejects_managed_workflow_manifests(tmp_path: Path) -> None:
    (tmp_path / "tau.yaml").write_text("schema_version: 1\nname: wf\n")
    result = tau("run", "validate", cwd=tmp_path)
    assert result.returncode == 2
    assert "managed workflow manifests are outside tau run validate" in result.stderr


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_validate_rejects_each_invalid_fixture(
    fixture: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process through the same entry point the console script calls (fast)."""
    expected_path = fixture.read_text().splitlines()[0].removeprefix("# expect-path:").strip()
    assert run(cli, "tau", ["run", "validate", "--config", str(fixture)]) == 2
    err = capsys.readouterr().err
    assert f"{fixture}:" in err
    if expected_path:
        assert f"{expected_path}" in err
    assert "Traceback" not in err


def test_schema_is_a_json_schema_that_accepts_the_examples() -> None:
    result = tau("run", "schema", "-o", "json")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    for key in ("runtime", "compute", "policy", "storage", "profiler", "metrics", "experiment"):
        assert key in schema["properties"]
    for example in EXAMPLES:
        jsonschema.validate(yaml.safe_load(example.read_text()), schema)
    assert not jsonschema.Draft202012Validator(schema).is_valid({"compute": {"gpus_per_pod": 1}})


def test_schema_only_speaks_json() -> None:
    result = tau("run", "schema", "-o", "yaml")
    assert (result.returncode, result.stderr) == (2, "error: --output must be json\n")


def test_explain_config_is_markdown_when_piped_and_text_on_request() -> None:
    piped = tau("run", "explain-config")
    assert piped.returncode == 0
    assert piped.stdout.startswith("# Tau run config reference")
    assert "| `run.ttl_seconds_after_finished` | direct-only |" in piped.stdout
    table = tau("run", "explain-config", "--format", "text")
    assert table.returncode == 0
    assert "compute.workers  integer, default 1\n" in table.stdout


def test_run_help_teaches_the_flags_and_hides_legacy_ones() -> None:
    result = tau("run", "--help")
    assert result.returncode == 0
    for flag in ("--config", "--dry-run", "--context", "--namespace", "--project"):
        assert flag in result.stdout, flag
    for legacy in (
        "--engine",
        "--script",
        "--file",
        "--queue",
        "--gpu-class",
        "--workload-kind",
        "--runtime-pip",
        "retry",
    ):
        assert legacy not in result.stdout, legacy
    assert "policy.workload_profile_snapshot" in result.stdout


def test_run_target_rejects_an_invalid_config_before_anything_else(tmp_path: Path) -> None:
    (tmp_path / "tau").mkdir()
    (tmp_path / "tau" / "bad.yaml").write_text("compute: {gpus: -1}\n")
    bad = tau("run", "bad", "--dry-run=client", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert "tau/bad.yaml:1:11: compute.gpus must be >= 0" in bad.stderr


def test_dry_run_accepts_only_client_or_server() -> None:
    result = tau("run", "train", "--dry-run=foo", cwd=QUICKSTART)
    assert (result.returncode, result.stderr) == (
        2,
        "error: --dry-run must be one of: client, server\n",
    )


def test_local_refuses_cluster_flags_typed_with_it_but_not_tau_context(tmp_path: Path) -> None:
    repo = shutil.copytree(QUICKSTART, tmp_path / "quickstart")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAU_")}
    env.update(TAU_LOCAL_STATE_DIR=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"))

    def local(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [TAU, "run", "train", "--local", *args],
            cwd=repo,
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=False,
        )

    refused = local("--context", "aks-prod", "-n", "research")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        "error: --local runs on this machine, but --namespace, --context select a cluster; "
        "remove the cluster flags, or drop --local to submit to the cluster\n"
    )
    assert not (tmp_path / "state").exists()  # nothing started, no record kept
    ran = local(TAU_CONTEXT="aks-prod")
    assert ran.returncode == 0, ran.stderr
    assert "local run quickstart-train-" in ran.stderr


def test_words_after_the_target_are_refused_and_nothing_is_submitted() -> None:
    result = tau("run", "train", "validate", cwd=QUICKSTART)
    assert result.returncode == 2
    assert result.stderr.startswith("error: unexpected extra arguments after the target: validate")
    assert "tau run validate train" in result.stderr
    result = tau("run", "train", "bogus", "extra", "words", cwd=QUICKSTART)
    assert result.returncode == 2 and "bogus extra words" in result.stderr


def test_validate_refuses_what_the_dry_run_would_for_the_config_itself(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "nameless.yaml").write_text("engine: job\ncompute:\n  gpus: 0\nentrypoint: t.py\n")
    (tmp_path / "t.py").write_text("print(1)\n")
    (tmp_path / "lost.yaml").write_text("name: lost\nengine: job\nentrypoint: missing.py\n")
    for name, needle in (
        ("empty.yaml", "the run config is empty"),
        ("nameless.yaml", "name is required"),
        ("lost.yaml", "'missing.py' does not exist"),
    ):
        result = tau("run", "validate", "--config", name, cwd=tmp_path)
        assert result.returncode == 2, (name, result.stdout)
        assert needle in result.stderr
        assert_no_traceback(result)
    named = tau("run", "validate", "given", "--config", "nameless.yaml", cwd=tmp_path)
    assert named.returncode == 0 and "is valid" in named.stdout


def test_the_gpu_ray_tune_page_commands_run_offline_in_a_copied_repository(tmp_path: Path) -> None:
    """docs-examples-gpu-ray-tune: cp tau.yaml and train.py into a repo, validate, dry-run."""
    for name in ("tau.yaml", "train.py"):
        shutil.copy(ROOT / "examples" / "ray-tune-smoke" / name, tmp_path / name)
    validated = tau("run", "validate", "--config", "tau.yaml", cwd=tmp_path)
    assert (validated.returncode, validated.stdout) == (0, "tau.yaml is valid\n")
    dry = tau("run", "--config", "tau.yaml", "--dry-run=client", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    (rayjob,) = list(yaml.safe_load_all(dry.stdout))
    assert (rayjob["kind"], rayjob["metadata"]["name"]) == ("RayJob", "tune-smoke")
    assert_no_traceback(dry)


def test_every_lifecycle_verb_dispatches_as_a_verb_and_is_listed_in_order() -> None:
    """The lifecycle verbs load on first use; `LIFECYCLE_VERBS` is what tells `tau run status`
    from a target named `status` before they load, so it must name exactly what
    `run_lifecycle.register` adds, in the order `tau run --help` lists them."""
    import typer

    from tau.cli import run_lifecycle
    from tau.cli.run import LIFECYCLE_VERBS

    lifecycle = typer.Typer()
    run_lifecycle.register(lifecycle)
    assert tuple(typer.main.get_group(lifecycle).commands) == LIFECYCLE_VERBS
    section = tau("run", "--help").stdout.split("Commands:", 1)[1]
    listed = [line.split()[0] for line in section.splitlines() if line.startswith("  ")]
    assert listed == ["validate", "schema", "explain-config", *LIFECYCLE_VERBS]
    for verb in LIFECYCLE_VERBS:
        result = tau("run", "train", verb, cwd=QUICKSTART)
        assert result.returncode == 2
        assert f"write `tau run {verb} train`" in result.stderr

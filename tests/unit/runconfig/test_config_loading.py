"""Loading: YAML errors with file:line:column, strict keys, collected problems, provenance."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.errors import UsageError, ValidationError
from tau.runconfig import ConfigError, load, loads


def test_yaml_syntax_error_reports_line_and_column(issues) -> None:
    (issue,) = issues("name: t\ncompute:\n  gpus: [1\n  workers: 2\n")
    assert issue.path == ""
    assert issue.line == 4 and issue.column is not None
    assert issue.message.startswith("YAML syntax error")


def test_unknown_tags_are_syntax_errors_not_crashes(issues) -> None:
    (issue,) = issues("name: !!python/object:os.system x\n")
    assert issue.line == 1 and "YAML syntax error" in issue.message


def test_unknown_key_suggests_the_nearest_sibling(issues) -> None:
    (issue,) = issues("compute:\n  wrokers: 2\n")
    assert issue.path == "compute.wrokers"
    assert issue.message == 'field wrokers not found; did you mean "compute.workers"?'
    assert (issue.line, issue.column) == (2, 3)


def test_unknown_key_suggests_the_same_field_in_another_group(issues) -> None:
    (issue,) = issues("data_pvc: d\n")
    assert 'did you mean "storage.data_pvc"?' in issue.message


def test_unknown_key_without_a_near_match_has_no_suggestion(issues) -> None:
    (issue,) = issues("compute:\n  zzzzzzzzzz: 1\n")
    assert issue.message == "field zzzzzzzzzz not found"


def test_type_errors_point_at_the_value(issues) -> None:
    (issue,) = issues("compute:\n  gpus:   two\n")
    assert issue.path == "compute.gpus"
    assert issue.message == "expected an integer, got string 'two'"
    assert (issue.line, issue.column) == (2, 11)


def test_all_independent_problems_are_reported_together(issues) -> None:
    found = issues(
        """
        compute:
          gpus_per_pod: 1
          workers: '2'
        runtime:
          env: {EPOCHS: 3}
        polcy: {}
        """
    )
    assert [i.path for i in found] == [
        "compute.gpus_per_pod",
        "compute.workers",
        "runtime.env.EPOCHS",
        "polcy",
    ]
    assert [i.line for i in found] == [2, 3, 5, 6]


def test_cross_field_rules_are_collected_together(issues) -> None:
    found = issues(
        """
        engine: job
        compute: {gpus: -1, workers: 3}
        storage: {publish: STAGED}
        """
    )
    assert {i.path for i in found} == {"compute.gpus", "compute.workers", "storage.publish"}


def test_error_message_lists_every_problem_on_one_line_each(write) -> None:
    path = write("compute: {gpus: x}\nstorage: {output: 1}\n")
    with pytest.raises(ConfigError) as caught:
        load(path)
    error = caught.value
    assert error.exit_code == 2
    assert error.one_line() == (
        f"{path}: 2 problems in the run config; fix each one and rerun `tau run validate` "
        "(owner: run config author)"
    )
    assert error.problems == [str(i) for i in error.issues]
    assert all("\n" not in p for p in error.problems)


def test_a_single_problem_is_the_error_line_itself(write) -> None:
    path = write("compute: {gpus: -1}\n")
    with pytest.raises(ValidationError) as caught:
        load(path)
    assert caught.value.one_line() == (
        f"{path}:1:11: compute.gpus must be >= 0 (owner: run config author)"
    )
    assert caught.value.problems == []


def test_duplicate_keys_are_errors(issues) -> None:
    (issue,) = issues("name: a\nname: b\n")
    assert issue.path == "name" and issue.line == 2 and "first defined at line 1" in issue.message


def test_merge_keys_may_be_overridden(loads) -> None:
    text = "compute:\n  <<: {cpu_request: '1', memory_request: 1Gi}\n  cpu_request: '2'\n"
    compute = loads(text).config.compute
    assert (compute.cpu_request, compute.memory_request) == ("2", "1Gi")


def test_yaml_merge_keys_work(loads) -> None:
    text = "runtime:\n  env: &e {A: '1', B: '2'}\n  env_secret:\n    <<: {}\n"
    assert loads(text).config.runtime.env == {"A": "1", "B": "2"}


def test_recursive_aliases_are_rejected(issues) -> None:
    found = issues("runtime:\n  pip: &p [*p]\n")
    assert any("recursive" in i.message for i in found)


def test_alias_bombs_are_rejected_quickly(issues) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    found = issues("\n".join(lines) + "\n")
    assert any("too many nodes" in i.message for i in found)


def test_non_utf8_files_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        loads(b"name: \xff\n", tmp_path / "tau.yaml")
    assert "not UTF-8" in caught.value.issues[0].message


def test_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read run config"):
        load(tmp_path / "nope.yaml")


def test_eval_migration_error_comes_first(issues) -> None:
    (issue,) = issues("task: eval\ncompute: {bogus: 1}\n")
    assert issue.path == "task"
    assert issue.message.startswith(
        "task: eval, eval.harness, and eval.model were removed; evaluation is an ordinary run"
    )
    assert "runtime.env" in issue.message and "storage.output" in issue.message


def test_eval_key_alone_is_an_unknown_key(issues) -> None:
    (issue,) = issues("eval: {}\n")
    assert issue.path == "eval" and "field eval not found" in issue.message


def test_provenance_lookup(loads) -> None:
    loaded = loads(
        """
        name: t
        compute:
          gpus: 1
        metrics:
          history:
            - a.jsonl
        """
    )
    assert loaded.where("compute.gpus") == f"{loaded.path}:3:3"
    assert loaded.where("compute.workers") is None
    assert loaded.is_set("compute.gpus") and not loaded.is_set("compute.workers")
    assert loaded.position("compute.workers").line == 2  # nearest written parent
    assert loaded.where("metrics.history[0]") == f"{loaded.path}:6:7"


def test_entrypoint_resolves_against_the_config_directory(write) -> None:
    path = write("entrypoint: ../train.py\n", name="tau/train.yaml")
    loaded = load(path)
    assert loaded.base_dir == path.parent
    assert loaded.entrypoint_path() == (path.parent.parent / "train.py").resolve()


def test_entrypoint_importing_unshipped_local_modules_is_rejected(write) -> None:
    config = write("name: t\nentrypoint: ../train.py\n", name="tau/train.yaml")
    root = config.parent.parent
    (root / "train.py").write_text("import os\nimport utils\nfrom models.net import Net\n")
    (root / "utils.py").write_text("")
    (root / "models").mkdir()
    (root / "models" / "net.py").write_text("")
    with pytest.raises(ConfigError) as caught:
        load(config)
    (issue,) = caught.value.issues
    assert issue.path == "entrypoint" and issue.line == 2
    assert issue.message.startswith(
        'entrypoint "../train.py" imports local modules that are not shipped with it: '
        "models, utils;"
    )


def test_local_import_check_skips_shipped_trees_and_stdlib(write) -> None:
    config = write("name: t\nengine: rayjob\nentrypoint: src/train.py\nrun: {working_dir: src}\n")
    (config.parent / "src").mkdir()
    (config.parent / "src" / "train.py").write_text("import helpers\n")
    (config.parent / "src" / "helpers.py").write_text("")
    load(config)
    plain = write("name: t\nentrypoint: solo.py\n", name="plain.yaml")
    (plain.parent / "solo.py").write_text("import json, os\nfrom pathlib import Path\n")
    load(plain)

"""`tau run validate` refuses what an offline render would refuse for the config's own sake."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.runconfig import load
from tau.runconfig.issues import ConfigError
from tau.runconfig.offline import check_runnable


def write(tmp_path: Path, text: str, entry: str | None = "train.py") -> Path:
    if entry:
        (tmp_path / entry).write_text("print('hi')\n")
    path = tmp_path / "tau.yaml"
    path.write_text(text)
    return path


def problems(path: Path, run_name: str = "") -> list[str]:
    with pytest.raises(ConfigError) as caught:
        check_runnable(load(path), run_name=run_name)
    return [str(issue) for issue in caught.value.issues]


def test_an_empty_file_is_not_a_run(tmp_path: Path) -> None:
    assert problems(write(tmp_path, "")) == [
        f"{tmp_path / 'tau.yaml'}: the run config is empty; "
        "write at least name, engine and entrypoint (see "
        "`tau run explain-config`)"
    ]


def test_a_missing_name_is_reported_unless_name_is_given(tmp_path: Path) -> None:
    path = write(tmp_path, "engine: job\nentrypoint: train.py\n")
    assert any("name is required" in p for p in problems(path))
    check_runnable(load(path), run_name="override")


def test_the_name_override_obeys_the_name_rules(tmp_path: Path) -> None:
    path = write(tmp_path, "name: ok\nengine: job\nentrypoint: train.py\n")
    [problem] = problems(path, run_name="Not_A_Name")
    assert 'NAME: name "Not_A_Name" must be a DNS-1123 subdomain' in problem


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("name: x\nengine: job\nrun:\n  entrypoint: gone.py\n", "4:3: run.entrypoint"),
        ("name: x\nengine: job\nentrypoint: gone.py\n", "3:1: entrypoint"),
    ],
)
def test_an_entrypoint_that_does_not_exist_is_named_with_its_line(
    tmp_path: Path, text: str, where: str
) -> None:
    path = write(tmp_path, text, entry=None)
    [problem] = problems(path)
    assert problem.startswith(f"{path}:{where}: 'gone.py' does not exist")


def test_a_complete_config_passes(tmp_path: Path) -> None:
    check_runnable(load(write(tmp_path, "name: x\nengine: job\nentrypoint: train.py\n")))

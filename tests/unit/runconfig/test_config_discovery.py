"""Which file `tau run [TARGET] [--config]` means (reference §4.2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.errors import UsageError
from tau.runconfig import discover


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("name: t\n")
    return path


def test_default_discovery_order(tmp_path: Path) -> None:
    touch(tmp_path / ".tau.yaml")
    assert discover(tmp_path) == Path(".tau.yaml")
    touch(tmp_path / "tau.yml")
    assert discover(tmp_path) == Path("tau.yml")
    touch(tmp_path / "tau.yaml")
    assert discover(tmp_path) == Path("tau.yaml")


def test_nothing_found(tmp_path: Path) -> None:
    with pytest.raises(
        UsageError, match=r"no Tau run config found; create tau\.yaml or pass --config"
    ):
        discover(tmp_path)


def test_target_resolves_tau_dir_yaml_or_yml(tmp_path: Path) -> None:
    touch(tmp_path / "tau" / "train.yaml")
    touch(tmp_path / "tau" / "eval.yml")
    assert discover(tmp_path, target="train") == Path("tau/train.yaml")
    assert discover(tmp_path, target="eval") == Path("tau/eval.yml")


def test_target_with_both_extensions_is_ambiguous(tmp_path: Path) -> None:
    touch(tmp_path / "tau" / "train.yaml")
    touch(tmp_path / "tau" / "train.yml")
    with pytest.raises(UsageError, match="keep exactly one extension"):
        discover(tmp_path, target="train")


def test_unknown_target_names_the_expected_file(tmp_path: Path) -> None:
    with pytest.raises(
        UsageError, match=r'run target "missing" not found; expected tau/missing\.yaml'
    ):
        discover(tmp_path, target="missing")


def test_a_mistyped_target_gets_the_nearest_checked_in_target(tmp_path: Path) -> None:
    touch(tmp_path / "tau" / "train.yaml")
    touch(tmp_path / "tau" / "eval.yaml")
    touch(tmp_path / "tau" / "workspace.connection.yaml")
    with pytest.raises(UsageError) as raised:
        discover(tmp_path, target="trian")
    assert raised.value.one_line() == (
        'run target "trian" not found; expected tau/trian.yaml; did you mean "train"?; '
        "or pass --config (owner: researcher)"
    )
    with pytest.raises(UsageError, match=r"\(targets: eval, train\)"):
        discover(tmp_path, target="benchmark")


@pytest.mark.parametrize("target", ["tau/train", "../train", ".", "..", "train.yaml", "a\\b"])
def test_a_target_that_looks_like_a_path_points_to_config(tmp_path: Path, target: str) -> None:
    with pytest.raises(UsageError, match="must be a name, not a path; use --config"):
        discover(tmp_path, target=target)


def test_explicit_config_wins_and_must_be_a_file(tmp_path: Path) -> None:
    touch(tmp_path / "tau.yaml")
    touch(tmp_path / "exp" / "a.yaml")
    assert discover(tmp_path, target="ignored", config="exp/a.yaml") == Path("exp/a.yaml")
    absolute = tmp_path / "exp" / "a.yaml"
    assert discover(tmp_path, config=absolute) == absolute
    with pytest.raises(UsageError, match=r"--config nope\.yaml: no such file"):
        discover(tmp_path, config="nope.yaml")
    with pytest.raises(UsageError, match="not a regular file"):
        discover(tmp_path, config="exp")

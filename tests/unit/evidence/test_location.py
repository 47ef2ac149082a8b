"""Store resolution: --store, TAU_EXP_STORE, the scoped composite, and an error naming all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.errors import UsageError
from tau.evidence import resolve_store_path

COMPOSITE = {
    "TAU_EXP_STORE_ROOT": "/srv/exp",
    "TAU_CONTEXT": "aks",
    "TAU_TEAM": "vision",
    "TAU_PROJECT": "p1",
}


def test_the_flag_wins_over_every_env() -> None:
    env = {"TAU_EXP_STORE": "/env/store", **COMPOSITE}
    assert resolve_store_path("/flag/store", env) == Path("/flag/store")


def test_tau_exp_store_wins_when_no_flag() -> None:
    assert resolve_store_path(None, {"TAU_EXP_STORE": "/env/store", **COMPOSITE}) == Path(
        "/env/store"
    )


def test_the_composite_joins_root_context_team_project() -> None:
    assert resolve_store_path(None, COMPOSITE) == Path("/srv/exp/aks/vision/p1")


@pytest.mark.parametrize("bad", ["a/b", "..", ".", ""])
def test_a_composite_component_must_be_one_path_segment(bad: str) -> None:
    with pytest.raises(UsageError, match="TAU_TEAM"):
        resolve_store_path(None, {**COMPOSITE, "TAU_TEAM": bad})


def test_with_nothing_set_the_error_lists_every_option() -> None:
    with pytest.raises(UsageError) as caught:
        resolve_store_path(None, {})
    text = caught.value.one_line()
    for option in (
        "--store",
        "TAU_EXP_STORE",
        "TAU_EXP_STORE_ROOT",
        "TAU_CONTEXT",
        "TAU_TEAM",
        "TAU_PROJECT",
    ):
        assert option in text

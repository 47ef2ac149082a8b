"""Fuzz: `tau run validate` (and a client dry-run) on mutated run configs.

Each input starts from a checked-in example, gets fields set to hostile values, credentials
planted in secret-bearing and ordinary fields, and YAML- and byte-level attacks; the command
must exit 0 or 2 (1 for a dry-run's runtime failures) with one error line naming the file,
in bounded time and memory, print no planted secret and write no file.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tau.runconfig import catalog
from tests.fuzz.contract import TIMEOUT, budget, check, snapshot, tau
from tests.fuzz.hostile import HOSTILE_STRINGS, PLAIN_SECRETS, SCALARS, TOKENS, mutated_text

ROOT = Path(__file__).parents[2]
EXAMPLES = [yaml.safe_load(p.read_text()) for p in sorted(ROOT.glob("examples/*/tau/*.yaml"))]
PATHS = sorted(tuple(p.split(".")) for p in catalog.paths())
SCRIPTS = ("train.py", "tune_train.py", "history.py", "job.py", "main.py")

VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(HOSTILE_STRINGS, SCALARS, max_size=3),
)


def _set(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = data
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value


@st.composite
def configs(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    data = copy.deepcopy(draw(st.sampled_from(EXAMPLES)))
    secrets: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["field", "field", "secret", "env", "token", "unknown"]))
        if kind == "field":
            _set(data, draw(st.sampled_from(PATHS)), draw(VALUES))
        elif kind == "secret":
            secrets.append(draw(st.one_of(TOKENS, PLAIN_SECRETS)))
            _set(data, ("runtime", "env_secret", "HF_TOKEN"), secrets[-1])
        elif kind == "env":
            secrets.append(draw(PLAIN_SECRETS))
            name = draw(st.sampled_from(["API_KEY", "WANDB_TOKEN", "DB_PASSWORD"]))
            _set(
                data, ("runtime", "env", name), draw(st.sampled_from([secrets[-1], [secrets[-1]]]))
            )
        elif kind == "token":
            secrets.append(draw(TOKENS))
            _set(data, draw(st.sampled_from(PATHS)), secrets[-1])
        else:
            secrets.append(draw(TOKENS))
            _set(data, (draw(HOSTILE_STRINGS) or "x",), {"value": secrets[-1]})
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    if draw(st.booleans()):
        return text.encode("utf-8", "surrogatepass"), secrets
    mutated, planted = draw(mutated_text(text))
    return mutated, secrets + planted


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-run-config")
    (root / "repo" / "tau").mkdir(parents=True)
    (root / "repo" / ".git").mkdir()
    for name in SCRIPTS:
        (root / "repo" / name).write_text("import json\nprint('hi')\n")
    for name in ("home", "config", "state"):
        (root / name).mkdir()
    return root


@pytest.mark.timeout(TIMEOUT)
@budget(100)
@given(config=configs(), dry_run=st.sampled_from([False, False, False, True]))
def test_hostile_run_configs_keep_the_contract(
    work: Path, config: tuple[bytes, list[str]], dry_run: bool
) -> None:
    text, secrets = config
    path = work / "repo" / "tau" / "fuzz.yaml"
    path.write_bytes(text)
    before = snapshot(work)
    args = (
        ["run", "--config", "tau/fuzz.yaml", "--dry-run=client"]
        if dry_run
        else ["run", "validate", "--config", "tau/fuzz.yaml"]
    )
    outcome = tau(
        args,
        work / "repo",
        HOME=str(work / "home"),
        TAU_CONFIG_DIR=str(work / "config"),
        TAU_LOCAL_STATE_DIR=str(work / "state"),
    )
    check(
        "run config",
        outcome,
        codes=(0, 1, 2) if dry_run else (0, 2),
        secrets=tuple(secrets),
        outside=work,
        outside_before=before,
        names=() if dry_run else ("fuzz.yaml",),
    )

"""Fuzz: `taugrid-portal experiment import jsonl` on hostile histories and identifiers.

Histories mix well-formed rows with huge, non-finite and mistyped values, deep nesting,
invalid UTF-8 and broken JSON; identifiers try to leave the store. Every import ends in exit
0, 1 (a store conflict) or 2 with one error line, in bounded time and memory; nothing is
written outside the store, and the store still opens afterwards.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.evidence import Store, init_experiment
from tests.fuzz.contract import TIMEOUT, budget, check, portal, snapshot
from tests.fuzz.hostile import POISON, SCALARS

STORE = "inside/store"
STORE_ENTRIES = {
    "manifest.json",
    "index.sqlite",
    "index.sqlite-wal",
    "index.sqlite-shm",
    "append-log",
    "metrics",
    "artifacts",
    ".tau-exp.lock",
}
STEPS = st.one_of(
    st.integers(-5, 10_000),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e30, 2**63, -(2**63) - 1, "7", None, True, [1]]),
)
STAMPS = st.one_of(
    st.floats(1.6e9, 1.8e9),
    st.integers(1_600_000_000_000, 1_800_000_000_000),  # milliseconds
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e300, -1e12, 0, 2**64, "2024-01-01", None]),
)
KEYS = st.one_of(
    st.sampled_from(["loss", "train/loss", "acc", "_runtime", "lr", "", " ", "é", "a" * 300]),
    st.text(max_size=8),
)


def _dump(row: dict) -> bytes:
    def default(value: object) -> str:
        return str(value)

    text = json.dumps(row, default=default, allow_nan=True, ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["row"] * 6 + ["attack", "nested", "blank"]))
    if kind == "blank":
        return b""
    if kind == "nested":
        depth = draw(st.integers(10, 20_000))
        inner = draw(st.sampled_from([b"[" * depth, b'{"a":' * depth + b"1" + b"}" * depth]))
        return b'{"loss": 1, "x": ' + inner + b"}"
    if kind == "attack":
        return draw(
            st.sampled_from(
                [
                    b"[" * 40_000,
                    b'{"_step": 1, "loss": 1e309}',
                    b'{"_step": NaN, "loss": Infinity}',
                    b'{"lo\xffss": 1}',
                    b'{"lo\\ud800ss": 1}',
                    b'{"loss": 1',
                    b"\xef\xbb\xbf{}",
                    b"null",
                    b'"just a string"',
                    b'{"loss": ' + b"9" * 5000 + b"}",
                    b'{"loss": 1, "pad": "' + b"x" * 5_000_000 + b'"}',
                    b'{"s": "' + b"[" * 2000 + b'", "loss": 2}',
                ]
            )
        )
    row = {"_step": draw(STEPS), "_timestamp": draw(STAMPS)}
    row.update(draw(st.dictionaries(KEYS, SCALARS, max_size=4)))
    for field in ("_step", "_timestamp"):
        if draw(st.booleans()):
            row.pop(field)
    return _dump(row)


IDENTIFIERS = st.one_of(st.none(), POISON, st.sampled_from(["proj", "Proj", "x/../../up"]))


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-jsonl")
    init_experiment(root / STORE, "exp", project="proj")
    return root


@pytest.mark.timeout(TIMEOUT)
@budget(100)
@given(
    history=st.lists(lines(), min_size=0, max_size=8),
    project=IDENTIFIERS,
    group=IDENTIFIERS,
    experiment=st.one_of(st.none(), st.just("exp"), POISON),
    run=st.integers(0, 10_000),
)
def test_hostile_histories_keep_the_contract(
    work: Path,
    history: list[bytes],
    project: str | None,
    group: str | None,
    experiment: str | None,
    run: int,
) -> None:
    (work / "h.jsonl").write_bytes(b"\n".join(history) + b"\n")
    ignore = (STORE, "h.jsonl")
    before = snapshot(work, ignore=ignore)
    args = ["experiment", "--store", str(work / STORE), "import", "jsonl"]
    args += ["--run", f"r{run}", "--history", str(work / "h.jsonl")]
    for flag, value in (("--project", project), ("--group", group), ("--experiment", experiment)):
        if value is not None and "\x00" not in value:
            args += [flag, value]
    outcome = portal(args, work)
    check(
        "jsonl import",
        outcome,
        codes=(0, 1, 2),
        outside=work,
        outside_before=before,
        ignore=ignore,
    )
    assert {p.name for p in (work / STORE).iterdir()} <= STORE_ENTRIES
    store = Store.open(work / STORE)  # still a store: the import left it consistent
    with store.connect(readonly=True) as db:
        for (path,) in db.execute("SELECT path FROM metric_files"):
            resolved = (store.root / path).resolve()
            assert resolved.is_relative_to(store.root.resolve()) and resolved.is_file()
    assert math.isfinite(outcome.seconds)

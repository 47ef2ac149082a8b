"""Property: whatever YAML arrives, loading ends in a config or in field-path problems.

Thousands of generated and mutated configs (random keys, types, nesting, unicode, huge
values) go through load + validate. Nothing but the project's ValidationError may escape,
and every problem must name a field path and a line.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau.errors import ValidationError
from tau.runconfig import ConfigError, LoadedConfig, catalog, loads

ROOT = Path(__file__).parents[3]
EXAMPLES = [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "examples").glob("*/tau/*.yaml"))]
EXAMPLE_TEXTS = [p.read_text() for p in sorted((ROOT / "examples").glob("*/tau/*.yaml"))]
KNOWN_PATHS = sorted(tuple(p.split(".")) for p in catalog.paths())
FILE = Path("tau.yaml")
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

interesting = st.sampled_from(
    [
        "job",
        "rayjob",
        "ray",
        "RAY",
        "torchrun",
        "ray-tune",
        "ray-train",
        "python",
        "staged",
        "/data/out",
        "../x",
        "/tau-asset/x",
        "a100-80gb",
        "a100_nvlink_80gb",
        "MASTER_ADDR",
        "secret:key",
        "30s",
        "1m30s",
        "-5m",
        "latest",
        "8xa100-80gb",
        "elastic",
        "restricted",
        "registry.example.com/a@sha256:" + "a" * 64,
        "é🙂\u2028",
        "x" * 70000,
        "",
    ]
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=10),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    interesting,
)
WEIRD_KEYS = ["", " ", "é", "🙂", "Compute", "gpus ", "a.b", "k" * 300, "\u2028", "null", "1", "-"]
keys = st.one_of(
    st.sampled_from(sorted({p[-1] for p in KNOWN_PATHS})),
    st.sampled_from(WEIRD_KEYS),
    st.text(max_size=6),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(keys, scalars, max_size=2),
    st.lists(st.dictionaries(keys, scalars, max_size=2), max_size=2),
)
paths = st.one_of(
    st.sampled_from(KNOWN_PATHS),
    st.tuples(st.sampled_from(KNOWN_PATHS), keys).map(lambda pk: (*pk[0][:-1], pk[1])),
    st.lists(keys, min_size=1, max_size=3).map(tuple),
)
bases = st.one_of(st.just({}), st.sampled_from(EXAMPLES))


def assign(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    node = data
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[path[-1]] = value


@st.composite
def configs(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 19)) == 0:
        return draw(values)  # any YAML document at all, mapping or not
    data = copy.deepcopy(draw(bases))
    for path, value in draw(st.lists(st.tuples(paths, values), max_size=4)):
        assign(data, path, value)
    for path in draw(st.lists(st.sampled_from(KNOWN_PATHS), max_size=1)):
        node = data
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return data


def check(document: bytes, data: Any) -> None:
    try:
        loaded = loads(document, FILE)
    except ConfigError as error:
        assert isinstance(error, ValidationError) and error.exit_code == 2
        assert error.issues
        for issue in error.issues:
            assert issue.file == "tau.yaml"
            assert issue.message
            if isinstance(data, dict):
                assert issue.path, issue
                assert issue.line is not None, issue
        return
    assert isinstance(loaded, LoadedConfig)
    assert len(loaded.config_hash) == 64
    for warning in loaded.warnings:
        assert warning.path and warning.line is not None


@settings(
    max_examples=10_000, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
@given(configs())
def test_generated_configs_end_in_a_config_or_field_path_problems(data: Any) -> None:
    document = yaml.dump(data, Dumper=DUMPER, allow_unicode=True, sort_keys=False).encode()
    check(document, data)


@settings(max_examples=1_000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(EXAMPLE_TEXTS),
    st.lists(st.tuples(st.integers(0, 2000), st.text(max_size=3)), min_size=1, max_size=4),
)
def test_mutated_text_never_escapes_as_anything_but_validation_errors(
    text: str, edits: list[tuple[int, str]]
) -> None:
    for position, replacement in edits:
        at = position % (len(text) + 1)
        text = text[:at] + replacement + text[at + 1 :]
    try:
        loads(text.encode("utf-8", "surrogatepass"), FILE)
    except ConfigError as error:
        assert all(issue.message for issue in error.issues)

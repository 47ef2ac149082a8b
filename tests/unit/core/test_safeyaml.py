"""tau.safeyaml: hostile YAML is refused quickly, at its line, before anything walks it."""

from __future__ import annotations

import pytest

from tau import safeyaml
from tau.safeyaml import YamlRefused


def billion_laughs(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def refusal(text: str) -> YamlRefused:
    with pytest.raises(YamlRefused) as caught:
        safeyaml.load(text)
    return caught.value


@pytest.mark.timeout(5)  # the contract: no hang; unbounded, this walk takes hours
def test_a_500_byte_alias_bomb_is_refused_at_its_line() -> None:
    text = billion_laughs()
    assert len(text) < 600
    error = refusal(text)
    # a4 is the first anchor expanding to more than 100,000 nodes
    assert error.line == 5 and "too many nodes" in str(error) and str(error).startswith("line 5:")


def test_aliases_beyond_the_budget_are_refused_even_when_small() -> None:
    text = "base: &b x\nitems: [" + ", ".join(["*b"] * (safeyaml.MAX_ALIASES + 1)) + "]\n"
    assert "more than 100 YAML aliases" in str(refusal(text))
    ok = "base: &b {cpu: 1}\none: {<<: *b}\ntwo: {<<: *b, cpu: 2}\n"
    assert safeyaml.load(ok) == {"base": {"cpu": 1}, "one": {"cpu": 1}, "two": {"cpu": 2}}


@pytest.mark.parametrize(
    "text",
    ["loop: &l [*l]\n", "a: &m {self: *m}\n", "x:\n  - &s\n    - [*s]\n"],
)
def test_recursive_aliases_are_refused(text: str) -> None:
    error = refusal(text)
    assert "recursive YAML alias" in error.problem and error.line is not None


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("name: !custom x\n", "'!custom'"),
        ("data: !!binary aGVsbG8=\n", "'!!binary'"),
        ("items: !!set {a, b}\n", "'!!set'"),
        ("run: !!python/object/apply:os.system [id]\n", "'!!python/object/apply:os.system'"),
        ("pairs: !!omap [{a: 1}]\n", "'!!omap'"),
    ],
)
def test_unknown_tags_are_refused_with_their_line(text: str, shown: str) -> None:
    error = refusal("ok: 1\n" + text)
    assert error.line == 2
    assert error.problem == f"YAML tag {shown} is not allowed (core tags only)"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("engine: !!bool maybe\n", "'maybe' is not a valid bool"),
        ("gpus: !!int many\n", "'many' is not a valid int"),
        ("when: 2024-13-45\n", "'2024-13-45' is not a valid timestamp"),
        ("gpus: " + "9" * 5000 + "\n", "is not a valid int"),
        ("gpus: " + "9" * 30 + "\n", "does not fit in 64 bits; quote it if it is text"),
    ],
)
def test_scalars_that_do_not_construct_are_placed_refusals(text: str, problem: str) -> None:
    error = refusal(text)
    assert error.line == 1 and problem in error.problem
    assert len(error.problem) < 200  # a 5,000-digit literal is shown truncated


def test_nesting_is_bounded() -> None:
    deep = "k: " + "[" * (safeyaml.MAX_DEPTH + 5) + "]" * (safeyaml.MAX_DEPTH + 5) + "\n"
    assert "nesting deeper than 100 levels" in refusal(deep).problem
    block = "".join(" " * i + "k:\n" for i in range(2000))
    assert refusal(block).problem  # libyaml's own limit, still a refusal, never a crash


def test_shown_input_is_escaped_and_truncated() -> None:
    error = refusal('x: !!bool "\\e[31mred\\nline' + "z" * 500 + '"\n')
    assert "\x1b" not in error.problem and "\n" not in error.problem
    assert "\\x1b" in error.problem and len(error.problem) < 120


def test_core_yaml_still_loads() -> None:
    text = "a: 1\nb: [x, 2.5, true, null]\nc: {d: '007'}\nwhen: 2024-01-02\neq: =\n"
    data = safeyaml.load(text)
    assert data["a"] == 1 and data["b"] == ["x", 2.5, True, None] and data["c"] == {"d": "007"}
    assert str(data["when"]) == "2024-01-02" and data["eq"] == "="
    assert safeyaml.load("") is None
    assert safeyaml.load_all("a: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]
    assert "multiple YAML documents" in refusal("a: 1\n---\nb: 2\n").problem


def test_a_long_alias_free_document_is_not_mistaken_for_a_bomb() -> None:
    text = "".join(f"k{i}: [a, b, c]\n" for i in range(25_000))
    assert len(safeyaml.load(text)) == 25_000

"""Generators of hostile input shared by the fuzz targets: planted credentials, poisonous
strings, YAML attacks and byte-level mutations."""

from __future__ import annotations

import string

from hypothesis import strategies as st

ALNUM = string.ascii_letters + string.digits


MARK = "Zk9Sx"  # in every planted secret, so a shrunk input cannot fake an echo


def _token(prefix: str, size: int) -> st.SearchStrategy[str]:
    body = st.text(ALNUM, min_size=size - len(MARK), max_size=size - len(MARK))
    return body.map(lambda rest: prefix + MARK + rest)


# Credential-shaped values: each must be refused or redacted wherever it lands.
TOKENS = st.one_of(
    _token("ghp_", 36),
    _token("hf_", 34),
    _token("sk-proj-", 32),
    _token("github_pat_", 40),
    st.tuples(_token("eyJ", 20), _token("eyJ", 24), _token("", 16)).map(".".join),
)
# Plain secrets: only their field's name says they are secret.
PLAIN_SECRETS = _token("pw-", 20)

POISON = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "\x1b[2J\x1b[31mred",
        "\x1b]0;title\x07",
        "line\nbreak",
        "\r\n",
        "\u202eevil",
        "\ud7ff\ue000",
        "../../../etc/passwd",
        "/etc/shadow",
        "x/../../outside",
        "é🙂\u2028",
        "%s%n{0}${HOME}$(id)`id`",
        "x" * 100_000,
        "a/" * 3_000,
        "9" * 5000,
        "-1",
        "1e999",
        "NaN",
        "true",
        "null",
        "~",
        "*alias",
        "&anchor",
        "!tag",
        "<<",
        "=",
    ]
)

HOSTILE_STRINGS = st.one_of(POISON, st.text(max_size=30), TOKENS)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    HOSTILE_STRINGS,
)


def _bomb(levels: int) -> str:
    lines = ["b0: &b0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"b{i}: &b{i} [" + ", ".join([f"*b{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines)


YAML_ATTACKS = st.sampled_from(
    [
        _bomb(9),
        _bomb(6),
        "loop: &l [*l]",
        "self: &m {again: *m}",
        "x: *undefined",
        "tagged: !custom value",
        "obj: !!python/object/apply:os.system [id]",
        "bin: !!binary aGVsbG8=",
        "set: !!set {a, b}",
        "flag: !!bool maybe",
        "num: !!int many",
        "big: " + "9" * 5000,
        "big2: " + "9" * 30,
        "when: 2024-13-45",
        "deep: " + "[" * 500 + "]" * 500,
        "deep2: " + "{a: " * 120 + "1" + "}" * 120,
        "dup: 1\ndup: 2",
        "<<: *nothing",
        "merge: {<<: [1, 2]}",
        "---\nsecond: doc",
        "%YAML 9.9\n---",
        "\tindented: tab",
        "key: 'unterminated",
        'key: "\\uD800"',
        "? [complex, key]\n: value",
        "eq: =",
        "\ufeffbom: 1",
    ]
)


@st.composite
def mutated_text(draw: st.DrawFn, text: str) -> tuple[bytes, list[str]]:
    """`text` with a few line- and byte-level mutations, YAML attacks among them, and the
    credentials planted in comments on the way."""
    lines, planted = text.splitlines(), []
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["attack", "attack", "drop", "dup", "indent", "comment"]))
        at = draw(st.integers(0, len(lines)))
        if op == "attack":
            lines.insert(at, draw(YAML_ATTACKS))
        elif op == "drop" and lines:
            lines.pop(min(at, len(lines) - 1))
        elif op == "dup" and lines:
            lines.insert(at, lines[min(at, len(lines) - 1)])
        elif op == "indent" and lines:
            lines[min(at, len(lines) - 1)] = "  " + lines[min(at, len(lines) - 1)]
        elif op == "comment":
            planted.append(draw(TOKENS))
            key = draw(st.sampled_from(["token", "password", "note"]))
            lines.insert(at, f"# {key}: {planted[-1]}")
    data = bytearray(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    for _ in range(draw(st.integers(0, 2))):
        op = draw(st.sampled_from(["flip", "insert", "truncate"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "truncate":
            del data[at:]
    return bytes(data), planted

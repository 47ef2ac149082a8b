"""tau.errors.clean: every printed error line is bounded, escaped and free of credentials."""

from __future__ import annotations

import pytest

from tau.errors import MAX_LINE, TauError, ValidationError, clean

TOKENS = [
    "ghp_" + "a1" * 18,
    "github_pat_" + "B2" * 20,
    "hf_" + "c3" * 17,
    "sk-proj-" + "d4" * 12,
    "AKIA" + "E5F6" * 4,
    "xoxb-" + "12345-67890-abcdef",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2ln",
]


@pytest.mark.parametrize("token", TOKENS)
def test_credentials_are_redacted_wherever_they_appear(token: str) -> None:
    for text in (f"bad value {token}", f'engine "{token}" is not valid', f"x={token};y"):
        line = clean(text)
        assert token not in line and token[6:20] not in line and "<redacted>" in line


def test_url_passwords_sas_signatures_and_account_keys_are_redacted() -> None:
    line = clean("https://me:hunter22@host/p?sv=1&sig=abcdefghijklmnop1234 AccountKey=QUJD==")
    assert "hunter22" not in line and "abcdefghijklmnop1234" not in line and "QUJD" not in line


def test_terminal_escapes_newlines_and_bidi_overrides_are_escaped() -> None:
    assert clean("a\u2028b\u2029c") == "a\\u2028b\\u2029c"  # line separators split lines
    line = clean("name \x1b[2J\x1b]0;title\x07 x\ny\r\u202eevil \x9b31m")
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and "\u202e" not in line
    assert "\\x1b[2J" in line and "\\n" in line and "\\u202e" in line and "\\x9b" in line


def test_an_8_megabyte_value_is_shortened_and_the_rest_of_the_message_survives() -> None:
    line = clean('t.yaml:1:1: name "' + "x" * 8_000_000 + '" must be a DNS-1123 subdomain')
    assert len(line) < 200
    assert line.endswith('..." (8000000 characters) must be a DNS-1123 subdomain')


def test_a_token_inside_a_long_value_is_redacted_before_the_value_is_cut() -> None:
    token = TOKENS[0]
    line = clean(f'value "{token}{"z" * 500}"')
    assert "ghp_" not in line and "<redacted>" in line


def test_the_whole_line_is_capped() -> None:
    line = clean("word " * 100_000)
    assert len(line) <= MAX_LINE + 40 and line.endswith("(message truncated)")


def test_one_line_cleans_message_and_hint_but_keeps_the_owner() -> None:
    error = ValidationError(
        f"engine {TOKENS[2]!r}\nis not valid", hint="see\x1b[0m docs", owner="run config author"
    )
    line = error.one_line()
    assert line == (
        "engine '<redacted>'\\nis not valid; see\\x1b[0m docs (owner: run config author)"
    )
    assert isinstance(error, TauError)

"""Go duration strings read and print as the original contract's annotations do."""

from __future__ import annotations

import pytest

from tau.runconfig.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("30s", "30s"),
        ("90s", "1m30s"),
        ("2m", "2m0s"),
        ("1h", "1h0m0s"),
        ("3661.5s", "1h1m1.5s"),
        ("1.5s", "1.5s"),
        ("250ms", "250ms"),
        ("1us", "1µs"),
        ("0", "0s"),
    ],
)
def test_a_duration_prints_in_go_form(text: str, printed: str) -> None:
    assert format_duration(parse_duration(text)) == printed


@pytest.mark.parametrize("text", ["", "30", "1m30", "soon", "1d", "--1s"])
def test_what_go_would_not_parse_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)

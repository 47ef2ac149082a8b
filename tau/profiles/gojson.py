"""The bytes Go's `json.Marshal` produces, for digests the upstream controller computes in Go.

A digest only interoperates if both sides hash the same bytes, so this is not "compact JSON"
but Go's exact output: objects keep the caller's key order (they stand for Go structs, whose
fields encode in declaration order), no whitespace, and Go's string escaping — `<`, `>`, `&`,
U+2028 and U+2029 as `\\u00XX`/`\\u20XX` (HTML-safe), `\\b \\f \\n \\r \\t` short forms (Go ≥ 1.22),
other control characters as lowercase `\\u00XX`, everything else as raw UTF-8.

Floats are refused: no hashed record has one, and Go's float formatting differs from Python's.
Lone surrogates are refused too: Go never holds one in a string, so there is no Go output to
match.
"""

from __future__ import annotations

import re

_SHORT = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_SPECIAL = re.compile('["\\\\\x00-\x1f<>&\u2028\u2029\ud800-\udfff]')


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    if "\ud800" <= char <= "\udfff":
        raise ValueError("string holds a lone surrogate, which Go cannot represent")
    return f"\\u{ord(char):04x}"


def _encode(value: object, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, str):
        out.append('"' + _SPECIAL.sub(_escape, value) + '"')
    elif isinstance(value, dict):
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"object key {key!r} is not a string")
            if index:
                out.append(",")
            _encode(key, out)
            out.append(":")
            _encode(item, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot encode {type(value).__name__} like Go's encoding/json")


def marshal(value: object) -> bytes:
    """Go's `json.Marshal(value)` for dicts (as structs, in insertion order), lists, strings,
    integers, booleans and None."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out).encode()

"""Label and annotation hygiene: values Kubernetes accepts, and nothing that leaks.

A label value that Kubernetes rejects fails the whole create, and an oversized annotation
does too; so free-form researcher text (experiment names, groups) is normalised into label
values, annotations over the size limit are dropped rather than truncated into lies, and
the recorded `tau` command line never carries a secret.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Iterable, Mapping

LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
ANNOTATION_VALUE_MAX_BYTES = 8192
LABEL_VALUE_MAX = 63
_HASH_SUFFIX_LEN = 12
REDACTED = "<redacted>"

_INVALID_RUN = re.compile(r"[^a-z0-9_.-]+")
_SECRET_FLAG_WORDS = (
    "secret",
    "token",
    "password",
    "passwd",
    "credential",
    "api-key",
    "apikey",
)


def label_safe(value: str) -> str | None:
    """Normalise free text to a label value: lowercase, invalid runs → '-', trimmed.

    Values longer than 63 characters keep a readable prefix plus a 12-hex digest of the
    original so two long names never collapse into one label value. Returns None when
    nothing usable remains (the label is then omitted).
    """
    text = _INVALID_RUN.sub("-", value.strip().lower()).strip("-_.")
    if len(text) > LABEL_VALUE_MAX:
        digest = hashlib.sha256(value.encode()).hexdigest()[:_HASH_SUFFIX_LEN]
        head = text[: LABEL_VALUE_MAX - _HASH_SUFFIX_LEN - 1].rstrip("-_.")
        text = f"{head}-{digest}"
    return text or None


def is_label_value(value: str) -> bool:
    return len(value) <= LABEL_VALUE_MAX and bool(LABEL_VALUE.match(value))


def clean_labels(labels: Mapping[str, str | None]) -> dict[str, str]:
    """Drop empty and invalid label values; the object must still be creatable."""
    return {
        key: value
        for key, value in sorted(labels.items())
        if value is not None and value != "" and is_label_value(value)
    }


def clean_annotations(annotations: Mapping[str, str | None]) -> dict[str, str]:
    """Drop empty annotations and any value over 8 KiB (a partial value would mislead)."""
    return {
        key: value
        for key, value in sorted(annotations.items())
        if value and len(value.encode()) <= ANNOTATION_VALUE_MAX_BYTES
    }


def slug(title: str) -> str:
    """An experiment id from a human title: 'ModernBERT FineWeb: Round 1' → 'modernbert-…'."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def redact_command(argv: Iterable[str]) -> str:
    """Shell-quote a command line with every secret-bearing flag value replaced.

    `--env K=V` keeps the name but not the value; any flag whose name mentions a secret,
    token, password, PAT, credential or API key loses its value, in both the `--flag value`
    and `--flag=value` spellings.
    """
    out: list[str] = []
    pending: str | None = None
    for arg in argv:
        if pending is not None:
            out.append(_redact_value(pending, arg))
            pending = None
            continue
        if arg.startswith("-") and arg != "-" and arg != "--":
            name, eq, value = arg.lstrip("-").partition("=")
            prefix = arg[: len(arg) - len(arg.lstrip("-"))]
            if eq:
                out.append(f"{prefix}{name}={_redact_value(name, value)}")
                continue
            if _is_secret_flag(name) or name == "env":
                pending = name
            out.append(arg)
            continue
        out.append(arg)
    return shlex.join(out)


def _is_secret_flag(name: str) -> bool:
    lowered = name.lower()
    # "pat" (personal access token) only as a whole word, so --path stays readable.
    return any(word in lowered for word in _SECRET_FLAG_WORDS) or "pat" in re.split(
        r"[-_]", lowered
    )


def _redact_value(flag: str, value: str) -> str:
    if flag == "env":
        key, eq, _ = value.partition("=")
        return f"{key}={REDACTED}" if eq else value
    if _is_secret_flag(flag):
        return REDACTED
    return value

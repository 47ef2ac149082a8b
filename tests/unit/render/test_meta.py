"""Label values Kubernetes accepts, annotation size limits, and command redaction."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.render.meta import (
    clean_annotations,
    clean_labels,
    is_label_value,
    label_safe,
    redact_command,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ModernBERT FineWeb: Round 1", "modernbert-fineweb-round-1"),
        ("--arm_a..", "arm_a"),
        ("v1.2", "v1.2"),
        ("!!!", None),
    ],
)
def test_label_safe_normalisation(raw, expected):
    assert label_safe(raw) == expected


def test_long_values_keep_a_prefix_and_a_digest():
    a = label_safe("x" * 80 + "a")
    b = label_safe("x" * 80 + "b")
    assert a != b
    assert len(a) == 63
    assert a.startswith("x" * 50 + "-")


@given(st.text())
def test_label_safe_always_yields_a_valid_label_value_or_nothing(raw):
    value = label_safe(raw)
    assert value is None or is_label_value(value)


def test_invalid_labels_and_oversized_annotations_are_dropped():
    assert clean_labels({"a": "ok", "b": "not ok", "c": None, "d": ""}) == {"a": "ok"}
    assert clean_annotations({"small": "x", "big": "y" * 8193, "edge": "z" * 8192}) == {
        "edge": "z" * 8192,
        "small": "x",
    }


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["tau", "run", "--env", "K=v"], "tau run --env 'K=<redacted>'"),
        (["tau", "run", "--env=K=v"], "tau run '--env=K=<redacted>'"),
        (["tau", "run", "--client-secret", "s"], "tau run --client-secret '<redacted>'"),
        (["tau", "run", "--github-pat=abc"], "tau run '--github-pat=<redacted>'"),
        (["tau", "run", "--password", "p", "train"], "tau run --password '<redacted>' train"),
        (["tau", "run", "get", "--path", "/data/x"], "tau run get --path /data/x"),
        (["tau", "run", "-n", "my ns"], "tau run -n 'my ns'"),
    ],
)
def test_command_redaction(argv, expected):
    assert redact_command(argv) == expected

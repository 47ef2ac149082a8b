"""Metric cards: the dashboard section a metric belongs to (first matching rule wins)."""

from __future__ import annotations

_RULES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    # (card, exact names, prefixes, substrings)
    ("Outcome", ("train/return", "eval/score"), (), ()),
    ("World model", ("train/loss", "eval/loss"), ("wm/", "world_model/", "model/"), ()),
    (
        "Optimization",
        ("train/lr", "learning_rate", "grad_norm", "gradient_norm", "step_time"),
        (),
        (),
    ),
    ("Throughput", (), ("train/examples",), ("tokens", "throughput")),
    ("Systems", (), ("gpu/", "system/"), ()),
    ("Checkpoint", (), ("checkpoint/", "ckpt/"), ()),
    ("Model diagnostics", (), ("feature/", "inference/", "eval/"), ()),
    ("Behavior", (), ("policy/",), ()),
)
OTHER = "Other metrics"


def card_for(name: str) -> str:
    lowered = name.lower()
    for card, exact, prefixes, contains in _RULES:
        if (
            lowered in exact
            or lowered.startswith(prefixes)
            or any(token in lowered for token in contains)
        ):
            return card
    return OTHER


def standard_name(name: str) -> str:
    """The comparable spelling of a metric name: trimmed, lowercase, '/' as separator."""
    return name.strip().lower().replace(".", "/")

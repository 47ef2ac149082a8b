"""Literal environment budget: 64 KiB per value, 128 KiB in total (reference §2.5)."""

from __future__ import annotations

import json


def env_config(env: dict[str, str]) -> str:
    return "engine: job\nruntime:\n  env: " + json.dumps(env) + "\n"


def test_a_value_of_exactly_64_kib_is_allowed(loads) -> None:
    loads(env_config({"PAYLOAD": "x" * 65536}))


def test_a_value_over_64_kib_is_rejected_with_its_size(issues) -> None:
    (issue,) = issues(env_config({"PAYLOAD": "x" * 65537}))
    assert issue.path == "runtime.env.PAYLOAD"
    assert issue.message.startswith(
        "literal environment variable 'PAYLOAD' is 65537 bytes; maximum is 65536 bytes"
    )


def test_value_size_counts_utf8_bytes(issues) -> None:
    (issue,) = issues(env_config({"P": "é" * 32769}))  # 65538 bytes
    assert "65538 bytes" in issue.message


def test_the_total_literal_payload_is_capped_at_128_kib(issues) -> None:
    env = {"A": "x" * 65536, "B": "x" * 65536}
    (issue,) = issues(env_config(env))
    assert issue.path == "runtime.env"
    assert issue.message.startswith("literal environment payload is 131078 bytes; maximum is")


def test_secret_references_are_outside_the_budget(loads) -> None:
    text = env_config({"A": "x" * 65536, "B": "x" * 65000})
    text += "  env_secret: {TOKEN: 'hf:token'}\n"
    loads(text)


def test_reserved_names_are_reported_together_and_sorted(issues) -> None:
    (issue,) = issues(
        "runtime:\n  env: {TAU_X: a, MASTER_PORT: '1', NCCL_IB: '0'}\n"
        "  env_secret: {master_addr: 's:k'}\n"
    )
    assert issue.message.startswith(
        "runtime.env contains Tau-managed keys that cannot be overridden: "
        "MASTER_PORT, NCCL_IB, TAU_X, master_addr; remove them from runtime.env "
        "(settable TAU_ keys: TAU_RESUME_FROM, TAU_RETRY_ATTEMPT, TAU_RETRY_MAX, TAU_RETRY_REASON)"
    )

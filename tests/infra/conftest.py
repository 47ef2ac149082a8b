"""The infra program and terraform-compat live outside the `tau` package, at the project root."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "terraform-compat"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


@pytest.fixture(scope="session")
def runs():
    """`runs(stack)`: the committed stack run once against the mock engine, shared by suites."""
    from infra_mocks import operator_settings, run_stack

    cache = {}

    def run(stack: str):
        if stack not in cache:
            cache[stack] = run_stack(operator_settings(stack), stack=stack)
        return cache[stack]

    return run

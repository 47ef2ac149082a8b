"""Every fixture intent renders exactly its reviewed golden YAML and passes the schema."""

from __future__ import annotations

import pytest

from tau.render import redact_secrets, render

from . import golden, intents
from .schema import validate_rendered


@pytest.mark.parametrize("fixture", sorted(intents.FIXTURES))
def test_fixture_matches_golden(fixture):
    objects = render(intents.FIXTURES[fixture]())
    validate_rendered(objects)
    golden.check(f"intent-{fixture}", golden.dump(redact_secrets(objects)))


@pytest.mark.parametrize("fixture", sorted(intents.FIXTURES))
def test_rendering_is_deterministic(fixture):
    assert render(intents.FIXTURES[fixture]()) == render(intents.FIXTURES[fixture]())

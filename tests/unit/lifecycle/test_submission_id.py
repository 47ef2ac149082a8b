"""Submission ids have upstream's format: 24 lowercase hex, fresh per submission."""

from __future__ import annotations

import re

from tau.lifecycle.submit import new_submission_id


def test_submission_ids_are_24_lowercase_hex_and_fresh():
    ids = {new_submission_id() for _ in range(3)}
    assert len(ids) == 3
    assert all(re.fullmatch("[0-9a-f]{24}", value) for value in ids)

"""Every values fragment the docs print is accepted by the chart as written.

The fragments under seed_values/ are copied from the docs pages named in their first comment
(placeholders filled in); an operator pasting them must get a render, not a schema error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

FRAGMENTS = sorted((Path(__file__).parent / "seed_values").glob("*.yaml"))


@pytest.mark.parametrize("fragment", FRAGMENTS, ids=lambda p: p.stem)
def test_documented_values_fragment_renders(render, fragment):
    assert render(values=fragment)


def test_there_is_a_fragment_for_each_docs_page_that_prints_one():
    pages = {p.read_text().splitlines()[0].split(":")[0].removeprefix("# ") for p in FRAGMENTS}
    assert pages == {
        "docs-reference-cluster-install-values",
        "docs-platform-admin-guide-policy-and-placement",
        "docs-examples-full-cluster",
        "docs-platform-admin-guide-enable-portal",
        "docs-platform-admin-guide-enable-lifecycle-recorder",
    }

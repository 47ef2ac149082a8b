"""explain-values documents every key of the distribution's values, from the chart itself."""

from __future__ import annotations

import yaml

from tau.cluster.values_reference import collect, comment_docs, markdown

from .conftest import ROOT

CHART_DIR = ROOT / "charts" / "taugrid"


def test_every_values_key_has_a_description():
    refs, undocumented = collect(CHART_DIR)
    assert undocumented == []
    keys = {ref.key for ref in refs}
    umbrella = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    assert set(umbrella) <= keys
    for expected in (
        "baselineQueue.gpu.flavors",
        "kueue.aksExtension.enableMultiKueue",
        "tau-core-controller.tauCluster.extraNodeLabelRules",
        "taugrid-core.portal.enabled",
        "gpu-monitoring.namespace",
        "components.gpuMonitoring.enabled",
    ):
        assert expected in keys


def test_umbrella_overrides_win_over_sub_chart_defaults():
    refs, _ = collect(CHART_DIR)
    defaults = {ref.key: ref.default for ref in refs}
    assert defaults["taugrid-core.portal.enabled"] is True
    assert defaults["components.gpuMonitoring.enabled"] == "(unset)"


def test_markdown_is_a_table_with_types_and_defaults():
    text = markdown(CHART_DIR)
    assert text.startswith("# TauGrid install values")
    assert "| `baselineQueue.name` | string | `jobqueue` |" in text
    assert "| `components.kueue.enabled` | boolean | `true` |" in text


def test_comment_parser_treats_lists_and_block_text_as_single_values():
    text = """\
# -- Section.
a:
  # -- A list.
  items:
    - name: x
      # -- not a key of a
      inner: 1
  # -- Text.
  text: |-
    looks: like-a-key
  # -- After the text.
  b: 2
"""
    assert comment_docs(text) == {
        "a": "Section.",
        "a.items": "A list.",
        "a.text": "Text.",
        "a.b": "After the text.",
    }


def test_comment_parser_takes_the_key_tree_from_the_yaml_parser():
    """A flow mapping's keys share their parent's line; a key inside a list item is not a
    chart value; a quoted key is its text; a blank line ends a description."""
    text = """\
# -- Flow.
flow: {inner: 1, other: 2}
list:
  - # -- not a chart value
    name: x
# -- Quoted.
"quoted.key": 1
# -- Detached.

plain: 2
# -- Spans
# two lines.
multi: 3
"""
    assert comment_docs(text) == {
        "flow": "Flow.",
        "quoted.key": "Quoted.",
        "multi": "Spans two lines.",
    }

"""LTTB keeps a long series' shape in a fixed number of points."""

from __future__ import annotations

import math

from tau.portal.downsample import lttb


def test_short_series_are_returned_unchanged() -> None:
    assert lttb([1, 2, 3], [4, 5, 6], 10) == ([1, 2, 3], [4, 5, 6])


def test_the_output_has_exactly_threshold_points_and_keeps_both_ends() -> None:
    xs = list(range(10_000))
    ys = [math.sin(x / 100) for x in xs]
    out_x, out_y = lttb(xs, ys, 500)
    assert len(out_x) == len(out_y) == 500
    assert (out_x[0], out_x[-1]) == (0, 9_999)
    assert out_x == sorted(out_x)


def test_a_single_spike_survives_downsampling() -> None:
    xs = list(range(100_000))
    ys = [0.0] * 100_000
    ys[54_321] = 100.0
    out_x, out_y = lttb(xs, ys, 200)
    assert 100.0 in out_y and 54_321 in out_x

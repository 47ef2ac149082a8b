"""Largest-Triangle-Three-Buckets downsampling for display.

Keeps the visual shape of a long series (peaks, drops) in a fixed number of points. Only
what is shown is reduced; stored points are never touched.
"""

from __future__ import annotations


def lttb(xs: list[float], ys: list[float], threshold: int) -> tuple[list[float], list[float]]:
    n = len(xs)
    if threshold >= n or threshold < 3:
        return list(xs), list(ys)
    out_x = [xs[0]]
    out_y = [ys[0]]
    every = (n - 2) / (threshold - 2)
    a = 0
    for i in range(threshold - 2):
        start = int(i * every) + 1
        end = int((i + 1) * every) + 1
        next_start = end
        next_end = min(int((i + 2) * every) + 1, n)
        if next_start >= next_end:
            avg_x, avg_y = xs[n - 1], ys[n - 1]
        else:
            span = next_end - next_start
            avg_x = sum(xs[next_start:next_end]) / span
            avg_y = sum(ys[next_start:next_end]) / span
        ax, ay = xs[a], ys[a]
        dx = ax - avg_x
        dy = avg_y - ay
        stop = max(min(end, n - 1), start + 1)
        # Twice the triangle area (a, candidate, next bucket's average), for every candidate.
        areas = [
            abs(dx * (y - ay) + dy * (x - ax))
            for x, y in zip(xs[start:stop], ys[start:stop], strict=True)
        ]
        best_index = start + areas.index(max(areas))
        out_x.append(xs[best_index])
        out_y.append(ys[best_index])
        a = best_index
    out_x.append(xs[n - 1])
    out_y.append(ys[n - 1])
    return out_x, out_y

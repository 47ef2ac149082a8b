"""`experiment plot`: a static SVG chart per metric, one line per run, for reports and PRs."""

from __future__ import annotations

import html
from typing import Any

PALETTE = ("#4f46e5", "#dc2626", "#059669", "#d97706", "#0891b2", "#7c3aed", "#db2777", "#65a30d")
W, H, PAD_L, PAD_R, PAD_T, PAD_B = 640, 260, 60, 130, 30, 30


def _panel(metric: str, series: list[dict[str, Any]], top: int) -> list[str]:
    xs: list[float] = [x for s in series for x in s["x"]]
    ys: list[float] = [y for s in series for y in s["y"]]
    out = [f'<text x="{PAD_L}" y="{top + 18}" font-weight="600">{html.escape(metric)}</text>']
    if not xs:
        return out
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    x1 = x1 if x1 > x0 else x0 + 1
    y1 = y1 if y1 > y0 else y0 + 1
    plot_w, plot_h = W - PAD_L - PAD_R, H - PAD_T - PAD_B

    def px(x: float) -> float:
        return PAD_L + (x - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return top + PAD_T + plot_h - (y - y0) / (y1 - y0) * plot_h

    out.append(
        f'<rect x="{PAD_L}" y="{top + PAD_T}" width="{plot_w}" height="{plot_h}" '
        'fill="none" stroke="#d1d5db"/>'
    )
    out.append(f'<text x="{PAD_L - 6}" y="{top + PAD_T + 10}" text-anchor="end">{y1:.4g}</text>')
    out.append(
        f'<text x="{PAD_L - 6}" y="{top + PAD_T + plot_h}" text-anchor="end">{y0:.4g}</text>'
    )
    out.append(f'<text x="{PAD_L}" y="{top + H - 8}">{x0:g}</text>')
    out.append(f'<text x="{PAD_L + plot_w}" y="{top + H - 8}" text-anchor="end">{x1:g}</text>')
    for index, s in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(s["x"], s["y"], strict=True))
        out.append(
            f'<polyline class="series" fill="none" stroke="{color}" '
            f'stroke-width="1.5" points="{points}"/>'
        )
        out.append(
            f'<text x="{W - PAD_R + 8}" y="{top + PAD_T + 14 + index * 16}" fill="{color}">'
            f"{html.escape(s['run_id'])}</text>"
        )
    return out


def render_svg(snapshot: dict[str, Any]) -> str:
    metrics = snapshot["metrics"]
    height = max(1, len(metrics)) * H
    body: list[str] = []
    for index, metric in enumerate(metrics):
        body += _panel(metric, snapshot["series"].get(metric, []), index * H)
    if not metrics:
        body.append('<text x="20" y="40">no scalar metrics recorded</text>')
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" '
        f'viewBox="0 0 {W} {height}" font-family="sans-serif" font-size="12">'
        f'<rect width="100%" height="100%" fill="#fff"/>{"".join(body)}</svg>\n'
    )

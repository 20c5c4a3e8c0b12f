"""Small server-side SVG charts: a win/loss sparkline of runs and a pass-count trend.

The sparkline draws a pass as a bar above the baseline and a fail below it
(an error half as deep), so it reads without colour. Every text that goes
into the markup is escaped here, so templates may embed the result as-is.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from markupsafe import Markup

from app.models import TrendPoint

COLOURS = {
    "pass": "#009e73",
    "fail": "#d55e00",
    "error": "#cc79a7",
    "warn": "#e69f00",
    "pending": "#9aa4b2",
    "ended": "#c3c8d0",
}


def _outcome_style(run: dict[str, Any]) -> tuple[str, float, str]:
    """(colour, signed height in [-1, 1], words) of one run in a sparkline."""
    outcome, status = run.get("outcome"), run.get("status")
    if outcome == "pass":
        return COLOURS["pass"], 1.0, "pass"
    if outcome == "fail":
        return COLOURS["fail"], -1.0, "fail"
    if outcome == "error":
        return COLOURS["error"], -0.5, "error"
    if status in ("queued", "running"):
        return COLOURS["pending"], 0.35, str(status)
    return COLOURS["ended"], 0.2, str(status or "no outcome")


def sparkline(runs: Sequence[dict[str, Any]], *, width: int = 120, height: int = 24) -> Markup:
    """Oldest to newest; each bar links to its run. `runs` items need id, status and outcome."""
    slots = max(len(runs), 12)
    step = width / slots
    bar = max(step - 2, 2)
    middle = height / 2
    parts = [
        f'<svg class="sparkline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" role="img" aria-label="{len(runs)} recent runs">',
        f'<line x1="0" y1="{middle}" x2="{width}" y2="{middle}" stroke="#d0d7de" stroke-width="1"/>',
    ]
    offset = (slots - len(runs)) * step  # right-align: the newest run is always at the right edge
    for index, run in enumerate(runs):
        colour, level, words = _outcome_style(run)
        depth = abs(level) * (middle - 1)
        y = middle - depth if level > 0 else middle
        x = offset + index * step + 1
        title = escape(f"run #{run.get('id')}: {words}")
        parts.append(
            f'<a href="/runs/{int(run["id"])}"><rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}"'
            f' height="{max(depth, 1):.1f}" rx="1" fill="{colour}"><title>{title}</title></rect></a>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def trend_chart(points: Sequence[TrendPoint], *, width: int = 720, height: int = 180) -> Markup:
    """Passed and failing clause counts per run, oldest to newest."""
    left, right, top, bottom = 36, 12, 12, 28
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max([1] + [max(p.passed, p.failing) for p in points])
    parts = [
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}"'
        f' role="img" aria-label="passed and failing clauses over the last {len(points)} runs">'
    ]
    if not points:  # no scale to read: a bare base line and the reason
        base = top + plot_h
        parts.append(f'<line x1="{left}" y1="{base}" x2="{width - right}" y2="{base}" stroke="#e5e8ec"/>')
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" class="axis">no runs yet</text>')
        parts.append("</svg>")
        return Markup("".join(parts))
    # Whole-number ticks only, each once: 0, the middle (when it is a count of its own) and the peak.
    for tick in sorted({0, peak // 2, peak} if peak >= 2 else {0, peak}):
        tick_y = top + plot_h * (1 - tick / peak)
        parts.append(f'<line x1="{left}" y1="{tick_y:.1f}" x2="{width - right}" y2="{tick_y:.1f}" stroke="#e5e8ec"/>')
        parts.append(f'<text x="{left - 6}" y="{tick_y + 4:.1f}" text-anchor="end" class="axis">{tick}</text>')

    def x_of(index: int) -> float:
        return left + (plot_w / 2 if len(points) == 1 else plot_w * index / (len(points) - 1))

    def y_of(value: int) -> float:
        return top + plot_h * (1 - value / peak)

    for key, colour, dash, mark in (
        ("passed", COLOURS["pass"], "", "circle"),
        ("failing", COLOURS["fail"], "5 4", "square"),
    ):
        path = " ".join(f"{x_of(i):.1f},{y_of(getattr(p, key)):.1f}" for i, p in enumerate(points))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash_attr}/>')
        for index, point in enumerate(points):
            value = getattr(point, key)
            x, y = x_of(index), y_of(value)
            title = escape(f"run #{point.run_id}: {value} {key}")
            shape = (
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}">'
                if mark == "circle"
                else f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" fill="{colour}">'
            )
            closing = "</circle>" if mark == "circle" else "</rect>"
            parts.append(f'<a href="/runs/{point.run_id}">{shape}<title>{title}</title>{closing}</a>')
    first, last = points[0].run_id, points[-1].run_id
    parts.append(f'<text x="{left}" y="{height - 8}" class="axis">run #{first}</text>')
    parts.append(f'<text x="{width - right}" y="{height - 8}" text-anchor="end" class="axis">run #{last}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))

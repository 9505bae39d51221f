"""The dashboard's charts as inline SVG drawn on the server: a series' sparkline, and a series point
by point (each point's median with its interval, alerts marked, each point a link to its run). No
script draws them, so a page shows its charts as soon as it arrives, on any screen."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from bootscope.usecases.dashboard import AlertMark, SeriesPoint

SPARK_WIDTH_PX = 120
SPARK_HEIGHT_PX = 24
CHART_WIDTH_PX = 960
CHART_HEIGHT_PX = 300
_MARGIN_LEFT_PX = 64
_MARGIN_BOTTOM_PX = 24
_MARGIN_TOP_PX = 12


def _range(values: Sequence[float]) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    if high - low < 1e-12:
        pad = abs(high) * 0.05 or 1.0
        return low - pad, high + pad
    return low, high


def sparkline_svg(values: Sequence[float], label: str) -> str:
    """Return an inline SVG line of ``values`` (oldest left), its ``label`` as the accessible name;
    an empty string for fewer than 2 finite values."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2:
        return ""
    low, high = _range(finite)
    step = (SPARK_WIDTH_PX - 2) / (len(finite) - 1)
    points = " ".join(
        f"{1 + i * step:.1f},{SPARK_HEIGHT_PX - 2 - (v - low) / (high - low) * (SPARK_HEIGHT_PX - 4):.1f}"
        for i, v in enumerate(finite)
    )
    return (
        f'<svg class="spark" role="img" aria-label="{escape(label)}" width="{SPARK_WIDTH_PX}" '
        f'height="{SPARK_HEIGHT_PX}" viewBox="0 0 {SPARK_WIDTH_PX} {SPARK_HEIGHT_PX}">'
        f'<polyline fill="none" stroke="currentColor" stroke-width="1.2" points="{points}"/></svg>'
    )


def _ticks(low: float, high: float) -> list[float]:
    span = high - low
    step = 10 ** math.floor(math.log10(span / 4)) if span > 0 else 1.0
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= 6:
            step *= factor
            break
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step) + 1)]


def series_svg(points: Sequence[SeriesPoint], alerts: Sequence[AlertMark], unit: str) -> str:
    """Return the series chart: one dot per point at its median, a whisker over its interval, a
    dashed line at each alert's step (red: regression, blue: improvement), each dot a link to the
    first run of its revision. Values in ``unit``; an empty string for no points."""
    if not points:
        return ""
    ends = [v for p in points for v in ((p.ci[0], p.ci[1]) if p.ci else (p.median, p.median))]
    low, high = _range(ends)
    plot_w = CHART_WIDTH_PX - _MARGIN_LEFT_PX - 8
    plot_h = CHART_HEIGHT_PX - _MARGIN_BOTTOM_PX - _MARGIN_TOP_PX
    step = plot_w / max(1, len(points) - 1)

    def x(i: int) -> float:
        return _MARGIN_LEFT_PX + (i * step if len(points) > 1 else plot_w / 2)

    def y(v: float) -> float:
        return _MARGIN_TOP_PX + plot_h - (v - low) / (high - low) * plot_h

    parts = [
        f'<svg class="series-chart" role="img" aria-label="the series, point by point" '
        f'viewBox="0 0 {CHART_WIDTH_PX} {CHART_HEIGHT_PX}" preserveAspectRatio="none">'
    ]
    for tick in _ticks(low, high):
        parts.append(
            f'<line class="grid" x1="{_MARGIN_LEFT_PX}" x2="{CHART_WIDTH_PX - 8}" y1="{y(tick):.1f}" '
            f'y2="{y(tick):.1f}"/><text class="tick" x="{_MARGIN_LEFT_PX - 4}" y="{y(tick) + 4:.1f}">'
            f"{tick:.4g}</text>"
        )
    parts.append(f'<text class="unit" x="4" y="{_MARGIN_TOP_PX + 8}">{escape(unit)}</text>')
    at = {p.revision: i for i, p in enumerate(points)}
    for mark in alerts:
        if mark.revision in at:
            cx = x(at[mark.revision]) - step / 2
            parts.append(
                f'<a href="/alerts/{mark.alert_id}"><line class="alert {escape(mark.kind)}" x1="{cx:.1f}" '
                f'x2="{cx:.1f}" y1="{_MARGIN_TOP_PX}" y2="{_MARGIN_TOP_PX + plot_h}">'
                f"<title>alert {mark.alert_id}: {escape(mark.kind)} ({escape(mark.state)}) at "
                f"{escape(mark.revision)}</title></line></a>"
            )
    for i, point in enumerate(points):
        title = f"{point.revision}: median {point.median:.6g} {unit}, {point.boots} boots"
        dot = (
            (
                f'<line class="ci" x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(point.ci[0]):.1f}" '
                f'y2="{y(point.ci[1]):.1f}"/>'
                if point.ci
                else ""
            )
            + f'<circle class="point" cx="{x(i):.1f}" cy="{y(point.median):.1f}" r="3">'
            f"<title>{escape(title)}</title></circle>"
        )
        parts.append(f'<a href="/runs/{point.runs[0]}">{dot}</a>' if point.runs else dot)
    parts.append("</svg>")
    return "".join(parts)


def quantiles_svg(rows: Sequence[tuple[str, float | None, float | None, float | None]], unit: str) -> str:
    """Return one line per group on a shared axis: a dot at its p50, a tick at its p90, the line
    running on to its p99 (``rows``: label, p50, p90, p99 in ``unit``; a group without a p50 is left
    out). An empty string when no group has one."""
    drawn = [(label, p50, p90, p99) for label, p50, p90, p99 in rows if p50 is not None]
    if not drawn:
        return ""
    ends = [v for _, p50, p90, p99 in drawn for v in (p50, p90, p99) if v is not None]
    low, high = _range([min(ends), max(ends)])
    row_px, label_px, width = 22, 220, CHART_WIDTH_PX
    height = row_px * len(drawn) + _MARGIN_BOTTOM_PX

    def x(v: float) -> float:
        return label_px + (v - low) / (high - low) * (width - label_px - 12)

    parts = [
        f'<svg class="quantiles" role="img" aria-label="p50, p90 and p99 per group" '
        f'viewBox="0 0 {width} {height}">'
    ]
    for i, (label, p50, p90, p99) in enumerate(drawn):
        cy = row_px * i + row_px / 2
        parts.append(f'<text class="label" x="4" y="{cy + 4:.1f}">{escape(label[:32])}</text>')
        if p99 is not None:
            parts.append(
                f'<line class="tail" x1="{x(p50):.1f}" x2="{x(p99):.1f}" y1="{cy:.1f}" y2="{cy:.1f}"/>'
            )
        if p90 is not None:
            parts.append(
                f'<line class="p90" x1="{x(p90):.1f}" x2="{x(p90):.1f}" y1="{cy - 6:.1f}" y2="{cy + 6:.1f}"/>'
            )
        parts.append(f'<circle class="p50" cx="{x(p50):.1f}" cy="{cy:.1f}" r="4"/>')
    for tick in _ticks(low, high):
        parts.append(
            f'<text class="tick" x="{x(tick):.1f}" y="{height - 6}" text-anchor="middle">{tick:.4g}</text>'
        )
    parts.append(f'<text class="unit" x="4" y="{height - 6}">{escape(unit)}</text></svg>')
    return "".join(parts)

"""Latency rows as a terminal table or JSON. Rendering only: every number arrives computed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bootscope.analyze.latency import LatencyRow
from bootscope.stats.latency import QuantileEstimate


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def quantile_text(estimate: QuantileEstimate, limit_us: int | None) -> str:
    """Return a quantile as a table shows it: ``12``, ``> 200 us`` (in the overflow) or ``n/a``
    (fewer than 10 expected exceedances: the run is too short to resolve it)."""
    if estimate.value_us is None:
        return f"> {limit_us} us" if limit_us is not None else "> max"
    if not estimate.resolvable:
        return "n/a"
    return str(estimate.value_us)


def latency_table(rows: Sequence[LatencyRow]) -> str:
    """Return the rows as an aligned text table with a legend; latencies in us."""
    names = [f"p{q.p * 100:g}" for q in rows[0].quantiles] if rows and rows[0].quantiles else []
    for row in rows:
        if row.quantiles and not names:
            names = [f"p{q.p * 100:g}" for q in row.quantiles]
    header = ["source", "thread", "cpu", "cycles", "min", "avg", "max", *names, "overflow"]
    body: list[list[str]] = []
    for row in rows:
        cells = [
            row.source,
            row.name,
            "-" if row.cpu is None else str(row.cpu),
            "-" if row.cycles is None else str(row.cycles),
            _num(row.min_us),
            _num(row.avg_us),
            _num(row.max_us),
        ]
        cells += [quantile_text(q, row.limit_us) for q in row.quantiles] or ["-"] * len(names)
        cells.append(str(row.overflow) if row.limit_us is not None else "-")
        body.append(cells)
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.rjust(w) if i > 1 else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in [header, *body]
    ]
    lines.append("latencies in us; min/avg/max are the tool's own; quantiles from the histogram")
    lines.append("'> H us': in the histogram's overflow; 'n/a': N x (1-p) < 10, too few cycles to resolve")
    return "\n".join(lines)


def _quantile_json(estimate: QuantileEstimate) -> dict[str, Any]:
    return {
        "p": estimate.p,
        "value_us": estimate.value_us,
        "ci_low_us": estimate.low_us,
        "ci_high_us": estimate.high_us,
        "confidence": estimate.confidence,
        "resolvable": estimate.resolvable,
        "in_overflow": estimate.value_us is None,
    }


def latency_json(rows: Sequence[LatencyRow], warnings: Sequence[str]) -> str:
    """Return the rows as a JSON document (``rows`` and ``warnings``); latencies in us."""
    document = {
        "rows": [
            {
                "source": row.source,
                "tool": row.tool,
                "thread": row.name,
                "cpu": row.cpu,
                "cycles": row.cycles,
                "min_us": row.min_us,
                "avg_us": row.avg_us,
                "max_us": row.max_us,
                "overflow": row.overflow,
                "histogram_limit_us": row.limit_us,
                "quantiles": [_quantile_json(q) for q in row.quantiles],
            }
            for row in rows
        ],
        "warnings": list(warnings),
    }
    return json.dumps(document, indent=2)

"""Latency rows as a terminal table or JSON. Rendering only: every number arrives computed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bootscope.analyze.latency import LatencyRow
from bootscope.report.text_table import Column, TextTable, drop_to_fit, lay_out, left_out_line, paragraph
from bootscope.stats.latency import QuantileEstimate


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


def quantile_text(estimate: QuantileEstimate, limit_us: int | None) -> str:
    """Return a quantile as a table shows it: ``12``, ``>200`` (in the overflow of a histogram that
    ends at 200 us) or ``n/a`` (fewer than 10 expected exceedances: the run is too short to resolve
    it)."""
    if estimate.value_us is None:
        return f">{limit_us}" if limit_us is not None else ">max"
    if not estimate.resolvable:
        return "n/a"
    return str(estimate.value_us)


# Left out, in this order, when the terminal is too narrow for every number: the CPU (the thread's
# name usually says it), the overflow count (a warning says it), then the tool's own average and min.
_DROPPABLE = ("cpu", "overflow", "avg", "min")
LEGEND = (
    "latencies in us; min/avg/max are the tool's own; quantiles from the histogram",
    "'>H': in the overflow of a histogram that ends at H us; 'n/a': N x (1-p) < 10, too few"
    " cycles to resolve",
)


def latency_table(rows: Sequence[LatencyRow], width_cells: int | None = None) -> str:
    """Return the rows as an aligned text table with a legend; latencies in us. Rows are grouped
    under a line naming their source (a file, or a run). ``width_cells``: the lines fit that many
    terminal cells (thread names cut, then low-value columns left out, numbers never cut); None:
    as wide as the cells are."""
    names: list[str] = []
    for row in rows:
        if row.quantiles and not names:
            names = [f"p{q.p * 100:g}" for q in row.quantiles]
    headers = ("thread", "cpu", "cycles", "min", "avg", "max", *names, "overflow")
    # A grid has no header line of its own: the headers are its first row. Cells are cut, never
    # folded, so that each row stays one line under its source's line.
    table = TextTable(tuple(Column(h, right=h != "thread") for h in headers), boxed=False)
    table.add_row(*headers)
    for row in rows:
        cells = [
            row.name,
            "-" if row.cpu is None else str(row.cpu),
            "-" if row.cycles is None else str(row.cycles),
            _num(row.min_us),
            _num(row.avg_us),
            _num(row.max_us),
        ]
        cells += [quantile_text(q, row.limit_us) for q in row.quantiles] or ["-"] * len(names)
        cells.append(str(row.overflow) if row.limit_us is not None else "-")
        table.add_row(*cells)
    width = width_cells or 1 << 30
    table, dropped = drop_to_fit(table, width, _DROPPABLE)
    header, *body = lay_out(table, width)
    lines = [header]
    for index, (row, line) in enumerate(zip(rows, body, strict=True)):
        if index == 0 or rows[index - 1].source != row.source:
            lines.extend(paragraph(f"{row.source}:", width))
        lines.append(line)
    lines.extend(line for text in LEGEND for line in paragraph(text, width))
    if dropped:
        lines.extend(paragraph(left_out_line(dropped, width), width))
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

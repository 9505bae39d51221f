"""The dashboard's two question pages (``bootscope serve``): compare two runs or variants, and the
fleet's summary and outliers. Every string passes through ``html.escape``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from bootscope.report.web_layout import layout, section, table
from bootscope.report.web_layout import text as _e
from bootscope.report.web_svg import quantiles_svg


def compare_page(a: str, b: str, metric: str, metrics: Sequence[str], result_html: str, error: str) -> str:
    """Return the comparison form (two ``RUN[:VARIANT]`` and a metric) and, below it, the diff
    (``result_html``, rendered by the diff's own HTML renderer) or the one-line ``error``."""
    options = "".join(
        f'<option value="{escape(m)}"{" selected" if m == metric else ""}>{escape(m)}</option>'
        for m in metrics
    )
    form = (
        '<form method="get" action="/compare" class="filter">'
        f'<label>a <input name="a" value="{escape(a)}" placeholder="RUN:VARIANT" maxlength="80"></label> '
        f'<label>b <input name="b" value="{escape(b)}" placeholder="RUN:VARIANT" maxlength="80"></label> '
        f'<label>metric <select name="metric">{options}</select></label> <button>compare</button></form>'
    )
    parts = [section("Compare two runs or two variants", form)]
    if error:
        parts.append(f'<p class="error" role="alert">{_e(error, 400)}</p>')
    if result_html:
        parts.append(f'<section id="diff">{result_html}</section>')
    return layout("Compare", "".join(parts), here="/compare")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list) and len(value) == 2:
        return f"{_cell(value[0])} to {_cell(value[1])}" if value[0] is not None else "-"
    return "-" if value is None else _e(value)


def json_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Return ``rows`` (objects of a JSON document) as a table of ``columns``."""
    return table(columns, [[_cell(row.get(c)) for c in columns] for row in rows])


def fleet_page(
    metric: str, by: str, summary: Mapping[str, Any] | None, outliers: Mapping[str, Any] | None, error: str
) -> str:
    """Return the fleet summary and outliers of ``metric`` by the fields ``by`` (the same documents
    as ``fleet summary`` and ``fleet outliers --format json``), or the one-line ``error``."""
    form = (
        '<form method="get" action="/fleet" class="filter">'
        f'<label>metric <input name="metric" value="{escape(metric)}" maxlength="64"></label> '
        f'<label>by <input name="by" value="{escape(by)}" placeholder="kernel_series,arch" '
        'maxlength="200"></label> '
        "<button>show</button></form>"
    )
    parts = [section("Fleet", form)]
    if error:
        parts.append(f'<p class="error" role="alert">{_e(error, 400)}</p>')
    if summary is not None:
        fields = [str(f) for f in summary.get("by", [])]
        columns = [*fields, "n", "ok", "failed", "incomplete", "p50", "p50_ci", "p90", "p99", "failed_rate"]
        groups = summary.get("groups", [])
        strip = quantiles_svg(
            [
                (" ".join(str(g.get(f)) for f in fields) or "all", g.get("p50"), g.get("p90"), g.get("p99"))
                for g in groups
            ],
            str(summary.get("unit", "")),
        )
        hint = '<p class="hint">Per group: the dot is p50, the tick p90, the line runs on to p99.</p>'
        parts.append(
            section(
                f"Summary of {metric}",
                json_table(groups, columns) + (hint + strip if strip else ""),
                id_="summary",
            )
        )
    if outliers is not None:
        rows = outliers.get("outliers", [])
        columns = list(rows[0].keys()) if rows else ["value"]
        inner = json_table(rows, columns) if rows else '<p class="none">No outlier.</p>'
        parts.append(section("Outliers", inner, id_="outliers"))
    return layout("Fleet", "".join(parts), here="/fleet")

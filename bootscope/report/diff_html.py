"""``diff`` as one self-contained HTML page: the same sentences as the table (``diff_out``), the
waterfall and the ranked components; nothing recomputed."""

from __future__ import annotations

from html import escape

from bootscope.report.compare_out import interval, num
from bootscope.report.diff_out import (
    clean,
    decomposition_lines,
    share_text,
    summary_lines,
    total_sentence,
    waterfall_svg,
)
from bootscope.stats.attribution import COMPARED, ComponentShift, DiffResult


def _shift_note(item: ComponentShift) -> str:
    return interval(item.shift_ci_s, 3) if item.status == COMPARED else f"({item.status})"


def to_html(result: DiffResult, top: int) -> str:
    """Return one self-contained HTML page: the total's verdict, the waterfall, the ranked table."""
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>bootscope diff: {escape(result.metric)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;text-align:right}"
        f"td:nth-child(3){{text-align:left}}</style></head><body>{diff_fragment(result, top)}</body></html>\n"
    )


def diff_fragment(result: DiffResult, top: int) -> str:
    """Return the diff as HTML to place in a page: the total's verdict, the waterfall, the
    sentences and the ``top`` ranked components (every string escaped)."""
    a = result.attribution
    sentences = (*summary_lines(result), *decomposition_lines(result))
    rows = "".join(
        f"<tr><td>{rank}</td><td>{escape(i.kind)}</td><td>{escape(clean(i.name))}</td>"
        f"<td>{i.n_a}/{i.n_b}</td><td>{num(i.median_a_s)}</td><td>{num(i.median_b_s)}</td>"
        f"<td>{num(i.shift_s, 3)} {escape(_shift_note(i))}</td>"
        f"<td>{num(i.q, 2)}</td><td>{share_text(i, a.share_basis)}</td></tr>"
        for rank, i in enumerate(a.components[:top], start=1)
    )
    return (
        f"<h1>What moved {escape(result.metric)}</h1><p>{escape(total_sentence(result))}</p>"
        f"<h2>Waterfall</h2>{waterfall_svg(result)}"
        f"<p>{'<br>'.join(escape(line) for line in sentences)}</p>"
        "<h2>Components</h2><div class='scroll'><table><tr><th>#</th><th>kind</th><th>component</th>"
        "<th>n a/b</th>"
        "<th>median a (s)</th><th>median b (s)</th><th>shift b - a [95%]</th><th>q</th><th>share</th></tr>"
        f"{rows}</table></div><p>{escape(a.correction)}</p>"
    )

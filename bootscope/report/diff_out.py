"""``diff`` rendered: a terminal table with bars, a JSON document, 72-column mail text, and an SVG
waterfall for the HTML report. All of it from a finished ``DiffResult``; nothing is recomputed."""

from __future__ import annotations

import io
import json
import textwrap
from html import escape
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from bootscope.analyze.components import PHASE
from bootscope.report.compare_out import interval, num, primary_p
from bootscope.stats.attribution import COMPARED, ComponentShift, DiffResult

MAIL_WIDTH = 72
MAIL_TOP = 5
BAR_WIDTH = 24


def _clean(text: str) -> str:
    # Log lines become component names: control characters would corrupt a terminal or a mail.
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _ci(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [ci[0], ci[1]]


def _component_json(item: ComponentShift) -> dict[str, Any]:
    return {
        "name": item.name,
        "kind": item.kind,
        "status": item.status,
        "a": {"n": item.n_a, "median": item.median_a_s},
        "b": {"n": item.n_b, "median": item.median_b_s},
        "shift": {"estimate": item.shift_s, "ci": _ci(item.shift_ci_s)},
        "p": item.p,
        "q": item.q,
        "share_of_total": item.share_of_total,
        "moved": item.moved,
    }


def diff_dict(result: DiffResult, top: int | None = None) -> dict[str, Any]:
    """Return the JSON-able document of a diff: metric, both sides, the total's shift, interval, p
    and verdict, the components ranked by share of the total's shift (at most ``top``; None: all),
    those with too few boots, the decomposition and the method. Times in seconds."""
    a = result.attribution
    t = a.total
    ranked = a.components if top is None else a.components[:top]
    return {
        "metric": result.metric,
        "unit": "s",
        "baseline": result.baseline,
        "variant": result.variant,
        "source": result.source,
        "kinds": list(result.kinds),
        "total": {
            "a": {"n": t.a.n, "median": t.a.median},
            "b": {"n": t.b.n, "median": t.b.median},
            "shift": t.shift_estimate,
            "ci": _ci(t.shift_ci),
            "p": primary_p(t),
            "verdict": t.verdict,
            "alpha": t.alpha,
        },
        "components": [_component_json(item) for item in ranked],
        "components_shown": len(ranked),
        "components_total": len(a.components),
        "too_few": [_component_json(item) for item in a.too_few],
        "decomposition": {
            d.kind: {
                "moved": d.moved,
                "explained": d.explained_s,
                "unexplained": d.unexplained_s,
                "sum_of_shifts": d.sum_all_s,
            }
            for d in a.by_kind
        },
        "fdr": a.fdr,
        "correction": a.correction,
        "method": "Hodges-Lehmann shift (b - a) with interval, Mann-Whitney p, Benjamini-Hochberg q",
        "notes": list(result.notes),
    }


def to_json(result: DiffResult, top: int | None = None) -> str:
    """Return :func:`diff_dict` as indented JSON text."""
    return json.dumps(diff_dict(result, top), indent=2)


def _bar(share: float | None, width: int = BAR_WIDTH) -> Text:
    """Return a bar of ``share`` (of the total's shift, 1 = all of it) in ``width`` cells; the part
    of a share beyond the total, or against it, is drawn in another style."""
    if share is None:
        return Text("")
    cells = min(width, round(abs(share) * width))
    return Text("█" * cells, style="red" if share > 0 else "cyan")


def total_sentence(result: DiffResult) -> str:
    """Return the total's verdict as one sentence: metric, sides, shift with interval, p, verdict."""
    t = result.attribution.total
    return (
        f"{result.metric}: {result.variant} ({t.b.n}) vs {result.baseline} ({t.a.n}): "
        f"{num(t.shift_estimate, 3)} s {interval(t.shift_ci, 3)}, p = {num(primary_p(t), 3)}: {t.verdict}"
    )


def decomposition_lines(result: DiffResult) -> list[str]:
    """Return one sentence per kind: what its moved components explain of the total's shift and what
    is left (s); kinds overlap, so each is its own decomposition."""
    a = result.attribution
    total = num(a.total.shift_estimate, 3)
    lines = []
    for d in a.by_kind:
        line = (
            f"{d.kind}: {d.moved} moved (q < {a.fdr:g}), explaining {num(d.explained_s, 3)} s of the total's "
            f"{total} s; left unexplained: {num(d.unexplained_s, 3)} s"
        )
        if d.kind == PHASE:
            line += f" (all phases' shifts sum to {num(d.sum_all_s, 3)} s)"
        lines.append(line)
    return lines


def table(result: DiffResult, top: int) -> RenderableType:
    """Return the rich renderable: the total's verdict, the ``top`` components ranked by share of
    the total's shift with a bar each, the decomposition and the method."""
    a = result.attribution
    grid = Table(
        box=box.SIMPLE_HEAD,
        title=Text(f"what moved {result.metric} (s): {result.variant} vs {result.baseline}, {result.source}"),
        title_justify="left",
    )
    for header in (
        "#",
        "kind",
        "component",
        "n a/b",
        "median a",
        "median b",
        "shift b - a [95%]",
        "q",
        "share",
        "",
    ):
        right = header in ("n a/b", "median a", "median b", "shift b - a [95%]", "q", "share")
        grid.add_column(
            header,
            justify="right" if right else "left",
            no_wrap=header != "component",
            min_width=32 if header == "component" else None,
        )
    for rank, item in enumerate(a.components[:top], start=1):
        shift = (
            f"{num(item.shift_s, 3)} {interval(item.shift_ci_s, 3)}"
            if item.status == COMPARED
            else (f"{num(item.shift_s, 3)} ({item.status})")
        )
        share = "-" if item.share_of_total is None else f"{item.share_of_total * 100:+.0f}%"
        grid.add_row(
            str(rank),
            item.kind,
            Text(_clean(item.name)),
            f"{item.n_a}/{item.n_b}",
            num(item.median_a_s),
            num(item.median_b_s),
            Text(shift, style="bold" if item.moved else ""),
            num(item.q, 2),
            share,
            _bar(item.share_of_total),
        )
    lines: list[RenderableType] = [
        Text(total_sentence(result), style="bold"),
        grid,
        *(Text(line) for line in decomposition_lines(result)),
    ]
    if len(a.components) > top:
        lines.append(Text(f"{len(a.components) - top} more component(s) not shown (--top)"))
    if a.too_few:
        lines.append(Text(f"{len(a.too_few)} component(s) with fewer than 2 boots on a side, not compared"))
    lines.append(Text(f"{a.correction}; moved = q below it and the shift's interval off zero"))
    lines += [Text(f"note: {note}") for note in result.notes]
    return Group(*lines)


def to_text(result: DiffResult, top: int, width: int = 140) -> str:
    """Return :func:`table` as plain text (no colour), ``width`` columns wide."""
    out = io.StringIO()
    console = Console(
        file=out, width=width, color_system=None, force_terminal=False, emoji=False, highlight=False
    )
    console.print(table(result, top))
    return out.getvalue()


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        _clean(text),
        MAIL_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent or "  ",
        break_long_words=True,
    ) or [""]


def to_mail(result: DiffResult, top: int = MAIL_TOP) -> str:
    """Return mail text, every line at most 72 columns: the total's verdict, then the ``top``
    components that moved it most, each with its shift, interval, q and share, then the method."""
    a = result.attribution
    lines = _wrap(total_sentence(result))
    lines.append("")
    lines += _wrap(f"The {min(top, len(a.components))} components that moved most ({result.source}):")
    for rank, item in enumerate(a.components[:top], start=1):
        share = "" if item.share_of_total is None else f", {item.share_of_total * 100:+.0f}% of the total"
        head = f"{rank}. {item.kind} {item.name}"
        if item.status == COMPARED:
            body = f"{num(item.shift_s, 3)} s {interval(item.shift_ci_s, 3)}, q = {num(item.q, 2)}{share}"
        else:
            body = f"{item.status}: {num(item.shift_s, 3)} s{share}"
        lines += _wrap(head, "  ")
        lines += _wrap(body, "     ")
    lines.append("")
    for line in decomposition_lines(result):
        lines += _wrap(line)
    lines += _wrap(f"Method: Hodges-Lehmann shift (b - a), 95% interval, Mann-Whitney; {a.correction}.")
    return "\n".join(lines) + "\n"


def waterfall_kind(result: DiffResult) -> str | None:
    """Return the kind a waterfall draws: the phases when present (they add up to the total in every
    boot), else the kind of the first-ranked component; None when nothing was compared. One kind
    only: kinds overlap (an initcall lies inside the initcalls phase), so mixing them counts twice."""
    kinds = [item.kind for item in result.attribution.components]
    if PHASE in kinds:
        return PHASE
    return kinds[0] if kinds else None


def waterfall_svg(result: DiffResult, top: int = 12) -> str:
    """Return an inline SVG waterfall of one kind (:func:`waterfall_kind`): from 0, each of its
    ``top`` ranked components adds its shift (s), then one bar for what they leave unexplained,
    ending at the total's shift."""
    a = result.attribution
    kind = waterfall_kind(result)
    chosen = [i for i in a.components if i.kind == kind][:top]
    items = [(f"{i.kind} {i.name}", i.shift_s or 0.0) for i in chosen]
    total = a.total.shift_estimate or 0.0
    items.append(("rest (unexplained by the bars above)", total - sum(v for _, v in items)))
    steps: list[tuple[str, float, float]] = []
    level = 0.0
    for label, value in items:
        steps.append((label, level, level + value))
        level += value
    steps.append((f"total {result.metric}", 0.0, total))
    low = min(0.0, *(min(s, e) for _, s, e in steps))
    high = max(0.0, *(max(s, e) for _, s, e in steps))
    span = (high - low) or 1.0
    label_w, plot_w, row_h = 360, 420, 20
    height = row_h * len(steps) + 30

    def x(value: float) -> float:
        return label_w + (value - low) / span * plot_w

    rows = []
    for i, (label, start, end) in enumerate(steps):
        y = 10 + i * row_h
        left, right = sorted((x(start), x(end)))
        colour = "#555" if i == len(steps) - 1 else ("#c0392b" if end > start else "#2a7ab0")
        short = label if len(label) <= 52 else label[:51] + "…"
        rows.append(
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end" font-size="12">{escape(short)}</text>'
            f'<rect x="{left:.1f}" y="{y + 3}" width="{max(right - left, 1):.1f}" height="{row_h - 6}" '
            f'fill="{colour}"><title>{escape(label)}: {end - start:+.4f} s</title></rect>'
            f'<text x="{right + 4:.1f}" y="{y + 14}" font-size="11">{end - start:+.4f}</text>'
        )
    zero = x(0.0)
    axis = f'<line x1="{zero:.1f}" y1="5" x2="{zero:.1f}" y2="{height - 15}" stroke="#999"/>'
    width = label_w + plot_w + 80
    return (
        f'<svg class="waterfall" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="waterfall of {escape(result.metric)}">{axis}{"".join(rows)}</svg>'
    )


def _shift_note(item: ComponentShift) -> str:
    return interval(item.shift_ci_s, 3) if item.status == COMPARED else f"({item.status})"


def _share(item: ComponentShift) -> str:
    return "-" if item.share_of_total is None else f"{item.share_of_total * 100:+.0f}%"


def to_html(result: DiffResult, top: int) -> str:
    """Return one self-contained HTML page: the total's verdict, the waterfall, the ranked table."""
    a = result.attribution
    rows = "".join(
        f"<tr><td>{rank}</td><td>{escape(i.kind)}</td><td>{escape(_clean(i.name))}</td>"
        f"<td>{i.n_a}/{i.n_b}</td><td>{num(i.median_a_s)}</td><td>{num(i.median_b_s)}</td>"
        f"<td>{num(i.shift_s, 3)} {escape(_shift_note(i))}</td>"
        f"<td>{num(i.q, 2)}</td><td>{_share(i)}</td></tr>"
        for rank, i in enumerate(a.components[:top], start=1)
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>bootscope diff: {escape(result.metric)}</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 8px;text-align:right}"
        "td:nth-child(3){text-align:left}</style></head><body>"
        f"<h1>What moved {escape(result.metric)}</h1><p>{escape(total_sentence(result))}</p>"
        f"<h2>Waterfall</h2>{waterfall_svg(result)}"
        f"<p>{'<br>'.join(escape(line) for line in decomposition_lines(result))}</p>"
        "<h2>Components</h2><table><tr><th>#</th><th>kind</th><th>component</th><th>n a/b</th>"
        "<th>median a (s)</th><th>median b (s)</th><th>shift b - a [95%]</th><th>q</th><th>share</th></tr>"
        f"{rows}</table><p>{escape(a.correction)}</p></body></html>\n"
    )

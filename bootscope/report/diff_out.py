"""``diff`` rendered: a terminal table, a JSON document, 72-column mail text, and an SVG waterfall
for the HTML report. All of it from a finished ``DiffResult``; nothing is recomputed. Every format
says the same things in the same words, from the functions here: the total's verdict (or why the
boots cannot tell), the like-for-like guard, how the total came about when its parts cancel, the one
unexplained figure, and which share is shown (of the total, or of the sum of absolute moves when the
total did not move)."""

from __future__ import annotations

import io
import json
from html import escape
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from bootscope.analyze.components import PHASE
from bootscope.analyze.like_for_like import not_like_for_like, printing_differs
from bootscope.report.compare_out import interval, num, primary_p
from bootscope.stats.attribution import COMPARED, SHARE_OF_TOTAL, ComponentShift, DiffResult
from bootscope.stats.compare import CANNOT_TELL, FASTER, SLOWER

BAR_WIDTH = 8


def clean(text: str) -> str:
    """Return ``text`` with control characters as "?": log lines become component names, and such
    characters would corrupt a terminal or a mail."""
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
        "share_of_moves": item.share_of_moves,
        "moved": item.moved,
    }


def _s(value: float | None) -> str:
    """Return a signed shift in seconds: "+0.144 s", "-0.157 s"."""
    if value is None:
        return "-"
    return "0 s" if value == 0 else f"{value:+.3g} s"


def cannot_tell_reason(result: DiffResult) -> str | None:
    """Return why the total's boots cannot decide (the comparison's "cannot tell" note), or None."""
    total = result.attribution.total
    if total.verdict != CANNOT_TELL:
        return None
    return next((note for note in total.notes if note.startswith(CANNOT_TELL)), CANNOT_TELL)


def guard_lines(result: DiffResult) -> list[str]:
    """Return the like-for-like warning ("NOT LIKE FOR LIKE: ...") and, where the sides print
    differently, what that does to the rows seen on one side only; empty when the sides are alike."""
    guard = result.like_for_like
    line = None if guard is None else not_like_for_like(guard, result.baseline, result.variant)
    if guard is None or line is None:
        return []
    lines = [line]
    printed = result.attribution.printed_one_side
    knobs = printing_differs(guard)
    if knobs and printed:
        lines.append(
            f"{len(printed)} initcall and gap row(s) are on one side only because the sides print "
            f"differently ({', '.join(knobs)}): not compared, not called regressions"
        )
    return lines


def offset_sentence(result: DiffResult) -> str | None:
    """Return how the total came about when moved components of one kind went opposite ways ("the
    total held (+0.072 s, no significant difference) because, among the moved phases (q < 0.05),
    mm_init (-0.157 s) offset initcalls (+0.144 s) and smp_bringup (+0.099 s)"), or None when they
    all went one way."""
    a = result.attribution
    found = a.offsets
    if found is None:
        return None

    def named(pairs: tuple[tuple[str, float], ...], more: int) -> str:
        words = [f"{clean(name)} ({_s(shift)})" for name, shift in pairs]
        if more:
            words.append(f"{more} more")
        return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"

    rising = named(found.rising, found.more_rising)
    falling = named(found.falling, found.more_falling)
    total = a.total
    among = f"among the moved {found.kind}s (q < {a.fdr:g})"
    size = "-" if total.shift_estimate is None else f"{abs(total.shift_estimate):.3g} s"
    if total.verdict == SLOWER:
        return f"the total rose by {size}: {among}, {rising} outweighed {falling}"
    if total.verdict == FASTER:
        return f"the total fell by {size}: {among}, {falling} outweighed {rising}"
    return (
        f"the total held ({_s(total.shift_estimate)}, {total.verdict}) because, {among}, {falling} "
        f"offset {rising}"
    )


def unexplained_line(result: DiffResult) -> str | None:
    """Return the one unexplained figure as a sentence: the total's shift minus the shifts of the
    moved components of one kind (the phases when compared); None when there is none."""
    a = result.attribution
    if a.unexplained_s is None or a.explained_kind is None:
        return None
    moved = next((d.moved for d in a.by_kind if d.kind == a.explained_kind), 0)
    return (
        f"unexplained: {_s(a.unexplained_s)} of the total's {_s(a.total.shift_estimate)} "
        f"(the total's shift less the {moved} moved {a.explained_kind} component(s))"
    )


def share_line(result: DiffResult) -> str:
    """Return which share the outputs show: of the total's shift, or (when the total did not move,
    where such shares explode) of the sum of the absolute shifts of the component's kind."""
    if result.attribution.share_basis == SHARE_OF_TOTAL:
        return "share: of the total's shift"
    return (
        f"share: of the sum of absolute shifts of the component's kind, not of the total "
        f"({result.attribution.total.verdict}: shares of it would mislead)"
    )


def share_text(item: ComponentShift, basis: str) -> str:
    """Return the component's share against ``basis`` as a signed percentage ("-" for none)."""
    share = item.share(basis)
    return "-" if share is None else f"{share * 100:+.0f}%"


def summary_lines(result: DiffResult) -> list[str]:
    """Return the sentences every format prints under the total: why it cannot tell, the guard, how
    the total came about, the one unexplained figure and the share shown."""
    lines = [line for line in (cannot_tell_reason(result),) if line]
    lines += guard_lines(result)
    lines += [line for line in (offset_sentence(result), unexplained_line(result)) if line]
    lines.append(share_line(result))
    return lines


def diff_dict(result: DiffResult, top: int | None = None) -> dict[str, Any]:
    """Return the JSON-able document of a diff: metric, both sides, the total's shift, interval, p
    and verdict, the like-for-like guard, the components ranked by the size of their shift (at most
    ``top``; None: all), those with too few boots or printed on one side only, the decomposition,
    the one unexplained figure, the share basis, the summary sentences and the method. Seconds."""
    a = result.attribution
    t = a.total
    ranked = a.components if top is None else a.components[:top]
    guard = result.like_for_like
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
            "cannot_tell": cannot_tell_reason(result),
            "shape": {
                test.name: test.p
                for test in t.tests
                if test.name in ("kolmogorov_smirnov", "anderson_darling")
            },
            "modes": [note for note in t.notes if ": two modes, " in note],
        },
        "like_for_like": {
            "ok": guard is None or guard.ok,
            "differences": []
            if guard is None
            else [
                {"field": d.field, "a": list(d.a), "b": list(d.b), "changes_printing": d.changes_printing}
                for d in guard.differences
            ],
        },
        "components": [_component_json(item) for item in ranked],
        "components_shown": len(ranked),
        "components_total": len(a.components),
        "too_few": [_component_json(item) for item in a.too_few],
        "printed_one_side": [_component_json(item) for item in a.printed_one_side],
        "decomposition": {
            d.kind: {
                "moved": d.moved,
                "explained": d.explained_s,
                "sum_of_shifts": d.sum_all_s,
                "sum_of_absolute_shifts": d.sum_abs_s,
            }
            for d in a.by_kind
        },
        "unexplained": {"kind": a.explained_kind, "seconds": a.unexplained_s},
        "share_basis": a.share_basis,
        "summary": summary_lines(result),
        "fdr": a.fdr,
        "correction": a.correction,
        "method": "Hodges-Lehmann shift (b - a) with interval, Mann-Whitney p, Benjamini-Hochberg q",
        "notes": list(result.notes),
    }


def to_json(result: DiffResult, top: int | None = None) -> str:
    """Return :func:`diff_dict` as indented JSON text."""
    return json.dumps(diff_dict(result, top), indent=2)


def _bar(share: float | None, width: int = BAR_WIDTH) -> Text:
    """Return a bar of ``share`` (1 = all of the basis) in ``width`` cells: red where b is slower,
    cyan where faster."""
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


def shape_line(result: DiffResult) -> str | None:
    """Return the total's shape tests and modes as one line (None when there are none): a change that
    only makes a slow mode more frequent moves these, not the shift."""
    t = result.attribution.total
    tests = [test for test in t.tests if test.name in ("kolmogorov_smirnov", "anderson_darling")]
    modes = [note for note in t.notes if ": two modes, " in note]
    if not tests and not modes:
        return None
    parts = [f"{'KS' if test.name == 'kolmogorov_smirnov' else 'AD'} p = {num(test.p, 3)}" for test in tests]
    return "shape of the total: " + "; ".join(parts + modes)


def decomposition_lines(result: DiffResult) -> list[str]:
    """Return one sentence per kind: how many of its components moved and what their shifts sum to
    (s); kinds overlap, so each is its own decomposition. The one unexplained figure is
    :func:`unexplained_line`'s."""
    a = result.attribution
    lines = []
    for d in a.by_kind:
        line = f"{d.kind}: {d.moved} moved (q < {a.fdr:g}), their shifts sum to {_s(d.explained_s)}"
        if d.kind == PHASE:
            line += f"; all phases' shifts sum to {_s(d.sum_all_s)}"
        lines.append(line)
    return lines


def _shift_cell(item: ComponentShift) -> str:
    if item.status == COMPARED:
        return f"{num(item.shift_s, 3)} {interval(item.shift_ci_s, 3)}"
    return f"{num(item.shift_s, 3)} ({item.status})"


def table(result: DiffResult, top: int) -> RenderableType:
    """Return the rich renderable: the total's verdict and the summary sentences, the ``top``
    components ranked by the size of their shift (kind and name, shift with interval, q, share, a
    bar), the decomposition and the method. Narrow columns and a wrapping name: readable at 80
    columns (the boots a side and the medians are in the JSON)."""
    a = result.attribution
    basis = a.share_basis
    grid = Table(
        box=box.SIMPLE_HEAD,
        title=Text(f"what moved {result.metric} (s): {result.variant} vs {result.baseline}, {result.source}"),
        title_justify="left",
        pad_edge=False,
    )
    grid.add_column("#", justify="right", no_wrap=True)
    grid.add_column("component", ratio=1, min_width=16, overflow="fold")
    grid.add_column("b - a [95%]", justify="right", no_wrap=True)
    grid.add_column("q", justify="right", no_wrap=True)
    grid.add_column("share", justify="right", no_wrap=True)
    grid.add_column("", no_wrap=True)
    for rank, item in enumerate(a.components[:top], start=1):
        grid.add_row(
            str(rank),
            Text(f"{item.kind} {clean(item.name)}"),
            Text(_shift_cell(item), style="bold" if item.moved else ""),
            num(item.q, 2),
            share_text(item, basis),
            _bar(item.share(basis)),
        )
    lines: list[RenderableType] = [Text(total_sentence(result), style="bold")]
    shape = shape_line(result)
    if shape is not None:
        lines.append(Text(shape))
    lines += [Text(line) for line in summary_lines(result)]
    lines += [grid, *(Text(line) for line in decomposition_lines(result))]
    if len(a.components) > top:
        lines.append(Text(f"{len(a.components) - top} more component(s) not shown (--top)"))
    if a.too_few:
        lines.append(Text(f"{len(a.too_few)} component(s) with fewer than 2 boots on a side, not compared"))
    lines.append(Text(f"{a.correction}; moved = q below it and the shift's interval off zero"))
    lines += [Text(f"note: {note}") for note in result.notes]
    return Group(*lines)


def to_text(result: DiffResult, top: int, width: int = 80) -> str:
    """Return :func:`table` as plain text (no colour), ``width`` columns wide."""
    out = io.StringIO()
    console = Console(
        file=out, width=width, color_system=None, force_terminal=False, emoji=False, highlight=False
    )
    console.print(table(result, top))
    return "\n".join(line.rstrip() for line in out.getvalue().split("\n"))


def waterfall_kind(result: DiffResult) -> str | None:
    """Return the kind a waterfall draws: the one whose moved components explain the total
    (``explained_kind``: the phases when compared, as they add up to the total in every boot); None
    when nothing was compared. One kind only: kinds overlap (an initcall lies inside the initcalls
    phase), so mixing them counts twice."""
    return result.attribution.explained_kind


def waterfall_svg(result: DiffResult, top: int = 12) -> str:
    """Return an inline SVG waterfall of one kind (:func:`waterfall_kind`): from 0, each of its
    moved components (at most ``top``, largest first; the rest as one bar) adds its shift (s), then
    one bar for the one unexplained figure, ending at the total's shift."""
    a = result.attribution
    kind = waterfall_kind(result)
    moved = [i for i in a.components if i.kind == kind and i.moved]
    items = [(f"{i.kind} {i.name}", i.shift_s or 0.0) for i in moved[:top]]
    if len(moved) > top:
        items.append((f"{len(moved) - top} more moved", sum(i.shift_s or 0.0 for i in moved[top:])))
    total = a.total.shift_estimate or 0.0
    unexplained = a.unexplained_s if a.unexplained_s is not None else total - sum(v for _, v in items)
    items.append((f"unexplained (not by a moved {kind or 'component'})", unexplained))
    steps: list[tuple[str, float, float]] = []
    level = 0.0
    for label, value in items:
        steps.append((label, level, level + value))
        level += value
    steps.append((f"total {result.metric}", 0.0, total))
    # each bar's interval as a whisker from where the bar starts (the total's from 0)
    cis = {f"{i.kind} {i.name}": i.shift_ci_s for i in moved[:top]}
    cis[f"total {result.metric}"] = a.total.shift_ci
    whiskers = {n: (s + ci[0], s + ci[1]) for n, s, _ in steps if (ci := cis.get(n)) is not None}
    low = min(0.0, *(min(s, e) for _, s, e in steps), *(w[0] for w in whiskers.values()))
    high = max(0.0, *(max(s, e) for _, s, e in steps), *(w[1] for w in whiskers.values()))
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
            f'<text x="{max([right, *(x(w) for w in whiskers.get(label, ()))]) + 4:.1f}" y="{y + 14}" '
            f'font-size="11">{end - start:+.4f}</text>'
        )
        if (whisker := whiskers.get(label)) is not None:
            w0, w1, mid = x(whisker[0]), x(whisker[1]), y + row_h / 2
            rows.append(
                f'<path class="ci" d="M{w0:.1f} {mid:.1f}H{w1:.1f}M{w0:.1f} {mid - 4:.1f}V{mid + 4:.1f}'
                f'M{w1:.1f} {mid - 4:.1f}V{mid + 4:.1f}" stroke="#111" fill="none">'
                f"<title>interval {whisker[0] - start:+.4f} to {whisker[1] - start:+.4f} s</title></path>"
            )
    zero = x(0.0)
    axis = f'<line x1="{zero:.1f}" y1="5" x2="{zero:.1f}" y2="{height - 15}" stroke="#999"/>'
    width = label_w + plot_w + 80
    return (
        f'<svg class="waterfall" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="waterfall of {escape(result.metric)}">{axis}{"".join(rows)}</svg>'
    )

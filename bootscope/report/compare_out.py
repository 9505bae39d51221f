"""``bootscope compare`` output: a benchstat-like terminal table, JSON, Markdown and CSV.

Everything here only formats a ``Comparison`` (computed by ``bootscope.stats``); names of variants
and metrics come from users and logs, so they are escaped for rich markup and Markdown.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from bootscope.analyze.like_for_like import not_like_for_like
from bootscope.model import Comparison, LikeForLike, SideSummary, TestResult

TEST_TITLES = {
    "mann_whitney": "Mann-Whitney U",
    "sign": "sign test",
    "welch": "Welch t",
    "kolmogorov_smirnov": "Kolmogorov-Smirnov (shape)",
    "anderson_darling": "Anderson-Darling (shape)",
}
SAME = "no significant difference"
CANNOT_TELL = "cannot tell"
Guards = Sequence[LikeForLike | None]


def num(value: float | None, digits: int = 4) -> str:
    """Return ``value`` with ``digits`` significant digits ("-" for None, never "-0")."""
    if value is None:
        return "-"
    text = f"{value:.{digits}g}"
    return "0" if text in ("-0", "-0.0") else text


def interval(ci: tuple[float, float] | None, digits: int = 4) -> str:
    """Return "[low, high]" or "[no CI]" when the interval could not be computed."""
    return "[no CI]" if ci is None else f"[{num(ci[0], digits)}, {num(ci[1], digits)}]"


def percent(fraction: float | None) -> str:
    """Return a signed percentage such as "-4.6%" ("-" for None)."""
    return "-" if fraction is None else f"{fraction * 100:+.1f}%"


def verdict_mark(comparison: Comparison) -> str:
    """Return benchstat's "~" for no significant difference, else the verdict word."""
    return "~" if comparison.verdict == SAME else comparison.verdict


def cannot_tell_reason(comparison: Comparison) -> str | None:
    """Return why the boots cannot decide (the "cannot tell: ..." note of the comparison), or None
    when they can."""
    if comparison.verdict != CANNOT_TELL:
        return None
    return next((note for note in comparison.notes if note.startswith(CANNOT_TELL)), CANNOT_TELL)


def guard_line(comparison: Comparison, guard: LikeForLike | None) -> str | None:
    """Return the "NOT LIKE FOR LIKE: ..." line of a comparison's two sides, or None when alike or
    unknown (numbers state no facts)."""
    return None if guard is None else not_like_for_like(guard, comparison.a.name, comparison.b.name)


def guard_dict(guard: LikeForLike | None) -> dict[str, Any] | None:
    """Return the JSON of a like-for-like guard, ``{ok, differences: [{field, a, b, changes_printing}]}``
    (None: the input states no facts)."""
    if guard is None:
        return None
    return {
        "ok": guard.ok,
        "differences": [
            {"field": d.field, "a": list(d.a), "b": list(d.b), "changes_printing": d.changes_printing}
            for d in guard.differences
        ],
    }


def _guard_at(guards: Guards | None, index: int) -> LikeForLike | None:
    return guards[index] if guards is not None and index < len(guards) else None


def primary_p(comparison: Comparison) -> float | None:
    """Return the p-value the verdict rests on: Holm-adjusted when present, else the main test's
    (for the data-directed sign test, its two-sided equivalent)."""
    if comparison.p_adjusted is not None:
        return comparison.p_adjusted
    test = comparison.tests[0]
    if test.p is not None and test.name == "sign" and "two-sided p" in test.note:
        return min(1.0, 2.0 * test.p)
    return test.p


def _side_json(side: SideSummary) -> dict[str, Any]:
    return {
        "name": side.name,
        "n": side.n,
        "median": side.median,
        "median_ci": list(side.median_ci) if side.median_ci else None,
        "mean": side.mean,
        "std": side.std,
        "min": side.min,
        "max": side.max,
        "outliers": list(side.outliers),
        "values": list(side.values),
    }


def _test_json(test: TestResult) -> dict[str, Any]:
    return {
        "p": test.p,
        "alternative": test.alternative,
        "method": test.method,
        "statistic": test.statistic,
        "note": test.note,
    }


def comparison_dict(comparison: Comparison, definition: str = "") -> dict[str, Any]:
    """Return the JSON-ready document of one comparison (shift = b - a, values in ``unit``)."""
    c = comparison
    return {
        "metric": c.metric,
        "unit": c.unit,
        "definition": definition,
        "alpha": c.alpha,
        "method": c.method,
        "a": _side_json(c.a),
        "b": _side_json(c.b),
        "shift": {
            "estimate": c.shift_estimate,
            "ci": list(c.shift_ci) if c.shift_ci else None,
            "relative": c.shift_relative,
            "method": f"Hodges-Lehmann, {c.shift_method}",
        },
        "tests": {test.name: _test_json(test) for test in c.tests},
        "bootstrap": {"ci": list(c.bootstrap_ci) if c.bootstrap_ci else None, "seed": c.bootstrap_seed},
        "verdict": c.verdict,
        "p": primary_p(c),
        "p_adjusted": c.p_adjusted,
        "correction": c.correction or None,
        "power": {
            "detect": c.power_detect,
            "detect_relative": c.power_detect_relative,
            "n_per_side": c.power_n_per_side,
            "achieved": c.power_achieved,
            "target": 0.8 if c.power_detect is not None else None,
            "max_n": c.power_max_n,
        },
        "notes": list(c.notes),
    }


def to_json(comparisons: Sequence[Comparison], definition: str = "", guards: Guards | None = None) -> str:
    """Return JSON text: one object for a single comparison, a list of objects for several; with
    ``guards`` (one per comparison), each object says ``like_for_like`` and ``cannot_tell``."""
    documents = [comparison_dict(c, definition) for c in comparisons]
    if guards is not None:
        for i, (document, c) in enumerate(zip(documents, comparisons, strict=True)):
            document["like_for_like"] = guard_dict(_guard_at(guards, i))
            document["cannot_tell"] = cannot_tell_reason(c)
    payload: Any = documents[0] if len(documents) == 1 else documents
    return json.dumps(payload, indent=2, allow_nan=False)


CSV_FIELDS = (
    "metric", "unit", "a", "b", "n_a", "median_a", "median_a_low", "median_a_high", "n_b", "median_b",
    "median_b_low", "median_b_high", "shift", "shift_low", "shift_high", "shift_relative", "test", "p",
    "p_adjusted", "alpha", "verdict", "power_detect", "power_n_per_side", "not_like_for_like",
)  # fmt: skip


def to_csv(comparisons: Sequence[Comparison], guards: Guards | None = None) -> str:
    """Return CSV text, one row per comparison, columns ``CSV_FIELDS`` (empty cell: no value;
    ``not_like_for_like``: the fields on which the sides differ, separated by "; ")."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for index, c in enumerate(comparisons):
        guard = _guard_at(guards, index)
        unlike = None if guard is None or guard.ok else "; ".join(d.field for d in guard.differences)
        a_ci = c.a.median_ci or (None, None)
        b_ci = c.b.median_ci or (None, None)
        shift_ci = c.shift_ci or (None, None)
        row = [
            c.metric, c.unit, c.a.name, c.b.name, c.a.n, c.a.median, *a_ci, c.b.n, c.b.median, *b_ci,
            c.shift_estimate, *shift_ci, c.shift_relative, c.tests[0].name, primary_p(c), c.p_adjusted,
            c.alpha, c.verdict, c.power_detect, c.power_n_per_side, unlike,
        ]  # fmt: skip
        writer.writerow(["" if v is None else v for v in row])
    return out.getvalue()


def _md(text: str) -> str:
    # Names come from users and logs: neutralise HTML and the table's own syntax.
    return html.escape(text, quote=False).replace("|", "\\|").replace("`", "\\`").replace("\n", " ")


def to_markdown(comparisons: Sequence[Comparison], definition: str = "", guards: Guards | None = None) -> str:
    """Return a Markdown table (one row per comparison) followed by the like-for-like guard, method,
    power and notes."""
    first = comparisons[0]
    level = f"{round((1 - first.alpha) * 100)}%"
    lines = [
        f"**{_md(first.metric)}** ({_md(first.unit)}), medians with {level} intervals; shift = b - a",
        "",
        "| a | b | median a | median b | shift | relative | p | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in comparisons:
        lines.append(
            f"| {_md(c.a.name)} (n={c.a.n}) | {_md(c.b.name)} (n={c.b.n}) "
            f"| {num(c.a.median)} {interval(c.a.median_ci)} | {num(c.b.median)} {interval(c.b.median_ci)} "
            f"| {num(c.shift_estimate, 3)} {interval(c.shift_ci, 3)} | {percent(c.shift_relative)} "
            f"| {num(primary_p(c), 3)} | {_md(c.verdict)} |"
        )
    lines.append("")
    lines.extend(f"- {_md(line)}" for line in detail_lines(comparisons, guards))
    if definition:
        lines.append(f"- definition of {_md(first.metric)}: {_md(definition)}")
    return "\n".join(lines) + "\n"


def power_line(c: Comparison) -> str | None:
    """Return the sample-size advice sentence, or None when no power was computed."""
    if c.power_detect is None:
        return None
    amount = f"{num(c.power_detect, 3)} {c.unit}"
    if c.power_detect_relative is not None:
        amount += f" ({c.power_detect_relative * 100:g}% of a's median)"
    if c.power_n_per_side is None:
        return f"power: more than {c.power_max_n} boots per side to detect {amount} with 80% power"
    return (
        f"power: {c.power_n_per_side} boots per side detect a shift of {amount} with 80% power "
        f"(simulated from the observed samples, seed {c.bootstrap_seed})"
    )


def test_line(test: TestResult, unit: str) -> str:
    """Return one test as a sentence: name, alternative, method, p and note."""
    title = TEST_TITLES.get(test.name, test.name)
    p_text = "n/a" if test.p is None else num(test.p, 3)
    line = f"{title}: p = {p_text} ({test.alternative}, {test.method})"
    if test.name == "welch":
        line += ", reference only: it assumes normal means"
    return line + (f"; {test.note}" if test.note else "")


def detail_lines(comparisons: Sequence[Comparison], guards: Guards | None = None) -> list[str]:
    """Return the lines printed under the table: the like-for-like guard, method, tests, bootstrap,
    power, correction, notes (the "cannot tell" note is the verdict's, not repeated)."""
    lines: list[str] = []
    several = len(comparisons) > 1
    for index, c in enumerate(comparisons):
        prefix = f"{c.b.name}: " if several else ""
        unlike = guard_line(c, _guard_at(guards, index))
        if unlike:
            lines.append(prefix + unlike)
        lines.append(f"{prefix}shift = b - a by Hodges-Lehmann ({c.shift_method})")
        lines.extend(prefix + test_line(test, c.unit) for test in c.tests)
        if c.bootstrap_ci is not None:
            lines.append(
                f"{prefix}bootstrap of median(b) - median(a): {interval(c.bootstrap_ci, 3)} {c.unit} "
                f"(seed {c.bootstrap_seed})"
            )
        power = power_line(c)
        if power:
            lines.append(prefix + power)
        lines.extend(prefix + note for note in c.notes if note != cannot_tell_reason(c))
    if several and comparisons[0].correction:
        lines.append(f"{comparisons[0].correction}: verdicts use the adjusted p")
    return lines


def verdict_sentence(c: Comparison) -> str:
    """Return the verdict as a sentence naming alpha, the p-value used and any correction; for boots
    that cannot decide, why ("cannot tell: 3 and 2 boots cannot reach p < 0.05 ...")."""
    reason = cannot_tell_reason(c)
    if reason is not None:
        return f"{c.b.name} vs {c.a.name}: {reason}"
    p_text = num(primary_p(c), 3)
    correction = f", {c.correction}" if c.correction else ""
    return f"{c.b.name} vs {c.a.name}: {c.verdict} at alpha {c.alpha:g} (p = {p_text}{correction})"


def table(
    comparisons: Sequence[Comparison], definition: str = "", guards: Guards | None = None
) -> RenderableType:
    """Return the rich renderable of the comparison table and its detail lines. Narrow enough for 80
    columns: each row names side b (every side a is the baseline named in the title), "med" is the
    median; the medians' intervals are in the JSON, Markdown and mail."""
    first = comparisons[0]
    level = f"{round((1 - first.alpha) * 100)}%"
    title = f"{first.metric} ({first.unit}) against {first.a.name} ({first.a.n})"
    grid = Table(box=box.SIMPLE_HEAD, title=Text(title), title_justify="left", pad_edge=False)
    headers = ("b", "med a", "med b", f"shift b - a [{level}]", "rel", "p", "")
    name_width = min(16, max(len(f"{c.b.name} ({c.b.n})") for c in comparisons))
    for header in headers:
        left = header in ("b", "")
        grid.add_column(
            header,
            justify="left" if left else "right",
            no_wrap=header != "b",
            overflow="fold",
            min_width=name_width if header == "b" else None,
        )
    for c in comparisons:
        grid.add_row(
            Text(f"{c.b.name} ({c.b.n})"),
            num(c.a.median),
            num(c.b.median),
            Text(f"{num(c.shift_estimate, 3)} {interval(c.shift_ci, 3)}"),
            percent(c.shift_relative),
            num(primary_p(c), 3),
            Text(verdict_mark(c), style="bold" if c.verdict != SAME else ""),
        )
    details = [Text(verdict_sentence(c)) for c in comparisons]
    details += [Text(line) for line in detail_lines(comparisons, guards)]
    if definition:
        details.append(Text(f"definition of {first.metric}: {definition}"))
    return Group(grid, *details)


def to_text(comparisons: Sequence[Comparison], definition: str = "", width: int = 80) -> str:
    """Return the table and details as plain text (no colour), ``width`` columns wide."""
    out = io.StringIO()
    console = Console(
        file=out, width=width, color_system=None, force_terminal=False, emoji=False, highlight=False
    )
    console.print(table(comparisons, definition))
    return out.getvalue()

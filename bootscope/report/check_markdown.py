"""``bootscope check --markdown FILE``: the verdict as a pull-request comment (GitHub-flavoured
Markdown): a one-line verdict, a table of what is slower, a table of what is faster, a list of what
cannot tell (too few boots), and the method (test, alpha, threshold, what the reference resolves).

The rows are :mod:`check_rows`'s, the same as the JUnit file's. Names come from kernel logs: each is
written as a code span (nothing inside one is markup, HTML, a link or a mention), its fence longer
than any run of backticks in it and, in a table, its pipes escaped; other text from the result has
Markdown's and HTML's characters backslash-escaped. Lines stay within 80 columns except table rows
with long names.
"""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

from bootscope.report.check_rows import (
    CANNOT_TELL,
    FASTER,
    SLOWER,
    CheckAsked,
    CheckRow,
    check_rows,
    interval_text,
    level_text,
    printable,
    signed,
)

if TYPE_CHECKING:
    from bootscope.usecases.check_rule import CheckResult
    from bootscope.usecases.reference import Reach

WIDTH = 80
_VERDICTS = {0: "pass", 1: "regression", 125: "cannot tell"}
# Characters that open or close inline Markdown or HTML anywhere in a line; backslash-escaped.
_MARKUP = re.compile(r"([\\`*_\[\]<>|&~])")
_TICKS = re.compile("`+")


def md_text(text: str) -> str:
    """Return ``text`` for running Markdown: unprintable characters shown (``\\xNN``), Markdown's
    and HTML's characters backslash-escaped (``\\<``, ``\\|``, ``\\```...), so it renders as
    written."""
    return _MARKUP.sub(r"\\\1", printable(text))


def md_code(text: str, in_table: bool = False) -> str:
    """Return ``text`` as a code span that renders exactly ``text`` (unprintable characters shown):
    a fence of one backtick more than its longest run, padded with a space where it starts or ends
    with a backtick or space; in a table, pipes escaped (GFM reads ``\\|`` in a cell as a pipe, even
    in a code span). An empty name is ``(empty)``, a name of spaces only says how many."""
    shown = printable(text)
    if not shown.strip():
        return f"({len(shown)} spaces)" if shown else "(empty)"
    fence = "`" * (1 + max((len(run) for run in _TICKS.findall(shown)), default=0))
    pad = " " if shown[0] in "` " or shown[-1] in "` " else ""
    cell = shown.replace("|", "\\|") if in_table else shown
    return f"{fence}{pad}{cell}{pad}{fence}"


def check_markdown(result: CheckResult, asked: CheckAsked) -> str:
    """Return the Markdown comment (newline-terminated) for ``result``: verdict line, the
    like-for-like warning, the slower and faster tables, the cannot-tell list and the method."""
    rows = check_rows(result)
    lines = [_verdict(result, rows), ""]
    if result.not_like_for_like:
        lines += [_wrapped(f"**{md_text(result.not_like_for_like)}**", indent=""), ""]
    for title, state in (("Slower", SLOWER), ("Faster", FASTER)):
        chosen = [row for row in rows if row.state == state]
        lines += [f"### {title} than the reference ({len(chosen)})", ""]
        lines += _table(chosen, asked.alpha) if chosen else ["None.", ""]
    unsure = [row for row in rows if row.state == CANNOT_TELL]
    lines += [f"### Cannot tell ({len(unsure)})", ""]
    lines += [f"- {md_text(row.kind)} {md_code(row.name)}: {md_text(row.why)}" for row in unsure] or ["None."]
    lines += ["", *_method(result, asked)]
    return "\n".join(lines) + "\n"


def _verdict(result: CheckResult, rows: tuple[CheckRow, ...]) -> str:
    """Return the first line: the verdict and exit code, then in a few words why."""
    verdict = _VERDICTS.get(result.exit_code, str(result.exit_code))
    metric, total = md_code(result.metric), rows[0]
    slower = sum(row.state == SLOWER for row in rows[1:])
    faster = sum(row.state == FASTER for row in rows[1:])
    if result.exit_code == 1:
        why = _moved(metric if total.state == SLOWER else None, slower, "slower")
    elif total.state == CANNOT_TELL or result.reach is None:
        why = f"{metric}: {md_text(total.why)}"
    elif total.state == FASTER:
        why = _moved(metric, faster, "faster")
    else:
        why = f"{metric} not slower by more than {_margin(result.reach)}"
        why += f"; {_count(faster, 'component')} faster" if faster else ""
    return f"**bootscope: {verdict}** (exit {result.exit_code}): {why}"


def _moved(metric: str | None, components: int, how: str) -> str:
    parts = ([metric] if metric else []) + ([_count(components, "component")] if components else [])
    return f"{' and '.join(parts)} {how}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _margin(found: Reach) -> str:
    share = f" ({found.margin_s / abs(found.median_s):.1%})" if found.median_s else ""
    return f"{found.margin_s:.4f} s{share}"


def _table(rows: list[CheckRow], alpha: float) -> list[str]:
    """Return a table of ``rows``: kind, name, shift (s), interval (s), margin (s), q (p for the
    total); a component new to the reference shows its median instead."""
    level = next((level_text(row.decision) for row in rows if row.decision is not None), "95%")
    lines = [
        f"| kind | component | shift s | {level} interval s | margin s | q |",
        "| --- | --- | ---: | --- | ---: | ---: |",
    ]
    for row in rows:
        d = row.decision
        if d is None:
            median = "-" if row.new_median_s is None else f"{row.new_median_s:.4f}"
            numbers = f"new: median {median} | not in the reference | - | -"
        else:
            q = f"{row.q:.3g}" if row.q is not None else ("-" if row.p is None else f"p {row.p:.3g}")
            numbers = f"{signed(d.shift)} | {interval_text(d)} | {d.margin:.4f} | {q}"
        lines.append(f"| {md_text(row.kind)} | {md_code(row.name, in_table=True)} | {numbers} |")
    note = f"q: Benjamini-Hochberg over the components tested (the total: p); alpha {alpha:g}."
    return [*lines, "", note, ""]


def _method(result: CheckResult, asked: CheckAsked) -> list[str]:
    """Return the Method section: the test, alpha and threshold, what the reference resolves for
    this many boots (the margin and what set it), what was checked, and the use case's notes."""
    from bootscope.usecases.reference import METHOD

    items = [
        _wrapped(f"- Test: {md_text(METHOD)}."),
        _wrapped(
            f"- alpha {asked.alpha:g} (over the components: a false discovery rate); --threshold "
            f"{md_text(asked.threshold)}; --min-shift {md_text(asked.min_shift)} for a component."
        ),
        f"- Reference: {md_code(asked.reference)}.",
    ]
    if result.reach is not None:
        items.append(_wrapped(f"- {_resolution(result.reach)}"))
    items.append(
        f"- {_count(result.n_new, 'new boot')} reached {md_code(result.metric)}; "
        f"{_count(result.components_checked, 'component')} tested."
    )
    items += [_wrapped(f"- {md_text(note)}") for note in result.notes]
    return ["### Method", "", *items]


def _resolution(found: Reach) -> str:
    """Return what the reference resolves for this many new boots: its median, the margin and
    whether the threshold or the resolution set it, and the boots the threshold would need."""
    median = f"median {found.median_s:.4f} s over {found.boots} reference boots"
    asked = f"{found.threshold:.1%} ({found.threshold_s:.4f} s)"
    if found.margin_s <= found.threshold_s:
        return f"{md_text(found.metric)}: {median}; margin {_margin(found)}: the threshold {asked}."
    would = (
        f"{found.boots_for_threshold} new boots would resolve it"
        if found.boots_for_threshold
        else "no number of boots resolves it"
    )
    return (
        f"{md_text(found.metric)}: {median}; margin {_margin(found)}: {found.check_boots} new boots "
        f"resolve no finer, wider than the threshold {asked}; {would}."
    )


# A continuation line starting so would open a block of its own (a list, a heading, a quote, a
# setext underline) instead of continuing the item.
_OPENS_BLOCK = re.compile(r"^\s*([-+*](\s|$)|>|#{1,6}(\s|$)|\d{1,9}[.)](\s|$)|=+\s*$|-+\s*$)")


def _wrapped(text: str, indent: str = "  ") -> str:
    """Return a paragraph or list item with no code span in it (a break inside one would change the
    name it shows) wrapped at 80 columns, continuation lines indented by ``indent``; as it is when a
    continuation line would open a block of its own."""
    lines = textwrap.wrap(
        text, WIDTH, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    )
    return text if any(_OPENS_BLOCK.match(line) for line in lines[1:]) else "\n".join(lines)

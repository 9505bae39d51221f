"""Plain text within 72 columns for a commit message or a reply on a mailing list."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from bootscope.model import Comparison, LikeForLike, SideSummary
from bootscope.report.compare_out import (
    cannot_tell_reason,
    guard_line,
    interval,
    num,
    percent,
    power_line,
    test_line,
    verdict_sentence,
)

WIDTH = 72


def _wrap(text: str, indent: str = "") -> list[str]:
    # break_long_words: a hostile name without spaces must not push a line past 72 columns.
    return textwrap.wrap(
        text, WIDTH, initial_indent=indent, subsequent_indent=indent or "  ", break_long_words=True
    ) or [""]


def _clean(text: str) -> str:
    # Control characters from logs would corrupt a mail or a commit message.
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _side(side: SideSummary, unit: str, level: str) -> list[str]:
    lines = _wrap(f"{_clean(side.name)}: {side.n} boots, sorted ({unit}):")
    lines += _wrap(" ".join(num(v, 6) for v in sorted(side.values)), "  ")
    lines += _wrap(f"median {num(side.median)} {unit}, {level} CI {interval(side.median_ci)}", "  ")
    return lines


def comparison_mail(
    comparison: Comparison, definition: str = "", guard: LikeForLike | None = None
) -> list[str]:
    """Return the lines (each at most 72 columns) describing one comparison, marked "NOT LIKE FOR
    LIKE" when ``guard`` finds the sides differ."""
    c = comparison
    level = f"{round((1 - c.alpha) * 100)}%"
    lines = _wrap(f"{_clean(c.metric)}: {_clean(c.b.name)} against {_clean(c.a.name)}")
    unlike = guard_line(c, guard)
    if unlike:
        lines += _wrap(_clean(unlike))
    lines += _wrap(f"Definition: {_clean(definition) or 'not stated'}", "")
    lines.append("")
    lines += _side(c.a, c.unit, level) + _side(c.b, c.unit, level)
    lines.append("")
    lines += _wrap(
        f"Shift (b - a): {num(c.shift_estimate, 3)} {c.unit} ({percent(c.shift_relative)}), "
        f"{level} CI {interval(c.shift_ci, 3)} {c.unit}, Hodges-Lehmann ({c.shift_method})"
    )
    lines += _wrap("Method: " + test_line(c.tests[0], c.unit))
    lines += _wrap("Verdict: " + _clean(verdict_sentence(c)))
    power = power_line(c)
    if power:
        lines += _wrap(power[0].upper() + power[1:])
    for note in c.notes:
        if note != cannot_tell_reason(c):
            lines += _wrap(f"Note: {_clean(note)}")
    return lines


def to_mail(
    comparisons: Sequence[Comparison], definition: str = "", guards: Sequence[LikeForLike | None] = ()
) -> str:
    """Return the mail text for one or more comparisons (``guards``: one like-for-like guard per
    comparison, or none), every line at most 72 columns."""
    blocks = [
        "\n".join(comparison_mail(c, definition, guards[i] if i < len(guards) else None))
        for i, c in enumerate(comparisons)
    ]
    return "\n\n".join(blocks) + "\n"

"""``diff`` as mail text: every line at most 72 columns, for a commit message or a list reply; the
same sentences as the table (``diff_out``), nothing recomputed."""

from __future__ import annotations

import textwrap

from bootscope.report.compare_out import interval, num
from bootscope.report.diff_out import clean, decomposition_lines, summary_lines, total_sentence
from bootscope.stats.attribution import COMPARED, DiffResult

MAIL_WIDTH = 72
MAIL_TOP = 5


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        clean(text),
        MAIL_WIDTH,
        initial_indent=indent,
        subsequent_indent=indent or "  ",
        break_long_words=True,
    ) or [""]


def to_mail(result: DiffResult, top: int = MAIL_TOP) -> str:
    """Return mail text, every line at most 72 columns: the total's verdict and the summary
    sentences, then the ``top`` components that moved most (by the size of their shift, either
    way), each with its shift, interval, q and share, then the decomposition and the method."""
    a = result.attribution
    basis = a.share_basis
    lines = _wrap(total_sentence(result))
    for line in summary_lines(result):
        lines += _wrap(line)
    lines.append("")
    lines += _wrap(
        f"The {min(top, len(a.components))} components that moved most, either way ({result.source}):"
    )
    for rank, item in enumerate(a.components[:top], start=1):
        share = item.share(basis)
        share_text = "" if share is None else f", share {share * 100:+.0f}%"
        head = f"{rank}. {item.kind} {item.name}"
        if item.status == COMPARED:
            body = (
                f"{num(item.shift_s, 3)} s {interval(item.shift_ci_s, 3)}, q = {num(item.q, 2)}{share_text}"
            )
        else:
            body = f"{item.status}: {num(item.shift_s, 3)} s{share_text}"
        lines += _wrap(head, "  ")
        lines += _wrap(body, "     ")
    lines.append("")
    for line in decomposition_lines(result):
        lines += _wrap(line)
    lines += _wrap(f"Method: Hodges-Lehmann shift (b - a), 95% interval, Mann-Whitney; {a.correction}.")
    return "\n".join(lines) + "\n"

"""What ``check``'s file reports (JUnit: :mod:`check_junit`, Markdown: :mod:`check_markdown`) list:
one row for the total, then one for every component check names (slower, faster, cannot tell), each
with the words and numbers both print, so that the two reports never disagree. The verdicts are the
use case's (:mod:`bootscope.usecases.check_rule`); nothing here decides.

Component names come from kernel logs and are hostile: :func:`printable` shows every character that
a terminal, an XML 1.0 file or a Markdown renderer cannot take as it is (control characters, lone
surrogates, U+FFFE/U+FFFF) as a ``\\xNN`` or ``\\uNNNN`` escape, in both reports alike. Markup is each
renderer's to escape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bootscope.stats.decision import BAD, GOOD
from bootscope.usecases.check_rule import EXIT_CANNOT_TELL

if TYPE_CHECKING:
    from bootscope.stats.decision import BisectDecision
    from bootscope.usecases.check_rule import CheckResult

SLOWER, FASTER, CANNOT_TELL, NOT_SLOWER = "slower", "faster", "cannot tell", "not slower"
TOTAL = "total"
# C0 and C1 controls, DEL, surrogates and the two non-characters XML 1.0 forbids; tab is shown too.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True, slots=True)
class CheckAsked:
    """What ``check`` was asked, as the user wrote it, for the reports that say so: the reference
    file, the threshold (``5%``), the smallest shift a component must exceed (``1ms``) and alpha."""

    reference: str
    threshold: str
    min_shift: str
    alpha: float


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One thing a check report names: component ``kind`` and ``name`` (kind ``total`` for the
    metric itself), its ``state`` (slower, faster, cannot tell, not slower), the decision behind it
    (None for a component the reference lacks or one that could not be tested), the p of the test
    that gave the state (slower: "bad"; faster: "faster"; None when untested) and, for a component,
    its Benjamini-Hochberg q; ``new_median_s`` for a component new to the reference, and
    ``why``: for cannot tell, what is missing (one sentence)."""

    kind: str
    name: str
    state: str
    decision: BisectDecision | None = None
    p: float | None = None
    q: float | None = None
    new_median_s: float | None = None
    why: str = ""


def printable(text: str) -> str:
    """Return ``text`` with control characters, lone surrogates and U+FFFE/U+FFFF shown as
    ``\\xNN`` (``\\uNNNN`` above 0xFF); every other character as it is."""
    return _UNPRINTABLE.sub(lambda m: _escape(m.group()), text)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def total_row(result: CheckResult) -> CheckRow:
    """Return the total's row: slower, faster (proven faster by more than the margin), not slower,
    or cannot tell (too few boots; or undecided, with how many more boots would settle it)."""
    total, metric = result.total, result.metric
    if total is None:
        return CheckRow(TOTAL, metric, CANNOT_TELL, why=f"{result.n_new} new boot(s); a test needs 2")
    if total.verdict == BAD:
        return CheckRow(TOTAL, metric, SLOWER, total, total.p_bad)
    faster = next((f for f in result.improvements if f.kind == TOTAL), None)
    if faster is not None:
        return CheckRow(TOTAL, metric, FASTER, total, faster.p_faster)
    if total.verdict == GOOD:
        return CheckRow(TOTAL, metric, NOT_SLOWER, total, total.p_good)
    if result.more_boots:
        more = f"; about {result.more_boots} more boots would settle it"
    else:  # none counted: a regression elsewhere decided, or no number of boots would settle it
        more = "; many more boots are needed" if result.exit_code == EXIT_CANNOT_TELL else ""
    return CheckRow(
        TOTAL, metric, CANNOT_TELL, total, why=f"neither proven slower nor proven within the margin{more}"
    )


def component_rows(result: CheckResult) -> tuple[CheckRow, ...]:
    """Return the components check names, in its order: the slower (regressions; a component new to
    the reference with its median), the faster, then those that cannot tell (too few boots)."""
    rows = [
        CheckRow(f.kind, f.name, SLOWER, f.decision, f.decision.p_bad if f.decision else None, f.q_bad,
                 f.new_median_s)
        for f in result.regressions
        if f.kind != TOTAL
    ]  # fmt: skip
    rows += [
        CheckRow(f.kind, f.name, FASTER, f.decision, f.p_faster, f.q_faster)
        for f in result.improvements
        if f.kind != TOTAL
    ]
    rows += [
        CheckRow(u.kind, u.name, CANNOT_TELL, why=_too_few(u.n_reference, u.n_new))
        for u in result.cannot_tell
    ]
    return tuple(rows)


def _too_few(n_reference: int, n_new: int) -> str:
    return f"in {n_reference} reference and {n_new} new boots; a test needs 2 on each side"


def check_rows(result: CheckResult) -> tuple[CheckRow, ...]:
    """Return every row of the reports: the total first, then :func:`component_rows`."""
    return (total_row(result), *component_rows(result))


def label(row: CheckRow) -> str:
    """Return ``kind name`` (``phase initcalls``, ``total kernel_init_s``), printable."""
    return printable(f"{row.kind} {row.name}")


def signed(value_s: float) -> str:
    """Return seconds with sign and 4 decimals (``+0.0480``)."""
    return f"{value_s:+.4f}"


def interval_text(decision: BisectDecision) -> str:
    """Return the shift's interval in seconds (``[+0.0265, +0.0729]``), or ``no interval``."""
    if decision.shift_ci is None:
        return "no interval"
    low, high = decision.shift_ci
    return f"[{signed(low)}, {signed(high)}]"


def level_text(decision: BisectDecision) -> str:
    """Return the interval's confidence (``95%``): 1 - the alpha its decision was taken at."""
    return f"{1 - decision.alpha_look:.0%}"


def statistic_text(row: CheckRow, alpha: float) -> str:
    """Return the test's result in words: ``p 0.00397`` for the total, ``p 0.00397, q 0.0205`` for
    a component, each against ``alpha``; empty when nothing was tested."""
    if row.p is None:
        return ""
    q = "" if row.q is None else f", q {row.q:.3g}"
    return f"p {row.p:.3g}{q} (alpha {alpha:g})"


def row_sentence(row: CheckRow, asked: CheckAsked) -> str:
    """Return one line that says what the row's state rests on: the shift (new - reference, s) with
    its interval, the margin and what set it, p and q; a new component's median; the reason a row
    cannot tell. Printable, not escaped for any markup."""
    d = row.decision
    threshold, min_shift = printable(asked.threshold), printable(asked.min_shift)
    if row.state == CANNOT_TELL:
        return f"cannot tell: {row.why}"
    if d is None:
        median = "-" if row.new_median_s is None else f"{row.new_median_s:.4f}"
        return (
            f"slower: not in the reference; median {median} s in the new boots, above --threshold "
            f"{threshold} of the total's reference median and --min-shift {min_shift}"
        )
    if row.kind == TOTAL:
        margin = f"the larger of --threshold {threshold} of the reference median and its resolution"
    else:
        margin = f"the larger of --threshold {threshold} of its reference median and --min-shift {min_shift}"
    return (
        f"{row.state}: shift {signed(d.shift)} s, {level_text(d)} interval {interval_text(d)} s; "
        f"margin {d.margin:.4f} s ({margin}); {statistic_text(row, asked.alpha)}"
    )

"""The tune's section of the HTML report (``bootscope report --run ID`` of any run of a tune): the
knobs tried with their savings, intervals and decisions, where each kept saving came from, the
recommended command line, the Pareto front of saving against risk and what the budget left untried.
Every value is escaped; savings are in the metric's unit, positive when the tuned boot is faster."""

from __future__ import annotations

from html import escape

from bootscope.report.html_tables import section_table
from bootscope.report.tune_out import (
    amount,
    front_text,
    interval_text,
    left_out_text,
    qemu_text,
    where_text,
)
from bootscope.usecases.tune.stored import StoredTune


def tune_section(stored: StoredTune) -> str:
    """Return the HTML section of the tune ``stored`` (a short one saying why when it has no result)."""
    if stored.result is None:
        return (
            f"<section><h2>Tune (run {stored.probe})</h2>"
            f'<p class="hint">{escape(stored.why, quote=True)}</p></section>'
        )
    result = stored.result
    unit = result.unit
    rows = [
        (
            t.knob.name, t.knob.risk, amount(t.verdict.saving, unit), interval_text(t.verdict, unit),
            t.verdict.boots, t.verdict.decision + (f": {t.verdict.why}" if t.verdict.why else ""),
            where_text(t.where), t.knob.evidence,
        )
        for t in sorted(result.tried, key=lambda t: -(t.verdict.saving or float("-inf")))
    ]  # fmt: skip
    median = "-" if result.baseline_median is None else f"{result.baseline_median:.4g} {unit}"
    note = (
        f"Baseline command line {result.baseline_append or '(none)'!r}, median {median}; "
        f"{result.boots_spent} boots in runs {', '.join(map(str, result.runs))}. Each knob was booted "
        "against the baseline, interleaved; a saving is the Hodges-Lehmann shift with its "
        "distribution-free interval, kept only when the whole interval is a saving."
    )
    head = ("knob", "risk", "saving", "interval", "boots", "decision", "where it came from", "evidence")
    table = section_table(f"Tune: what makes {result.metric} smaller (run {stored.probe})", head, rows, note)
    return table.removesuffix("</section>") + _answer(stored) + "</section>"


def _answer(stored: StoredTune) -> str:
    result = stored.result
    assert result is not None
    parts = []
    r = result.recommended
    if r is None:
        parts.append("<p>No knob showed a saving: keep the baseline's command line.</p>")
    else:
        parts.append(
            f"<p>Recommended ({escape(', '.join(r.knobs))}): <code>{escape(r.append)}</code>"
            + (f" with the QEMU options <code>{escape(qemu_text(r.qemu_args))}</code>" if r.qemu_args else "")
            + ": "
            f"{escape(amount(r.verdict.saving, result.unit))} "
            f"{escape(interval_text(r.verdict, result.unit))} "
            f"({escape(r.verdict.decision)}); the knobs alone summed to "
            f"{escape(amount(r.sum_of_singles, result.unit))}.</p>"
        )
        if r.left_out:
            parts.append(f"<p>{escape(left_out_text(r.left_out).capitalize())}.</p>")
        if r.combination:
            parts.append(f"<p>The kept knobs {escape(r.combination)}: the best one alone is recommended.</p>")
    if result.front:
        parts.append(
            f"<p>Saving by the risk accepted (sums of single savings): {escape(front_text(result))}.</p>"
        )
    if result.untried:
        parts.append(f"<p>Not tried (budget): {escape(', '.join(k.name for k in result.untried))}.</p>")
    return "".join(parts)

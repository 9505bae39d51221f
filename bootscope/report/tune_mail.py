"""``tune`` as mail text, every line at most 72 columns: what a maintainer can send to a list with a
patch that changes a command line, the numbers from the tune's own result, nothing recomputed."""

from __future__ import annotations

import textwrap

from bootscope.report.tune_out import amount, front_text, interval_text, left_out_text, qemu_text, where_text
from bootscope.usecases.tune.search import TuneResult

MAIL_WIDTH = 72


def _wrap(text: str, indent: str = "", hanging: str = "  ") -> list[str]:
    return textwrap.wrap(
        text, MAIL_WIDTH, initial_indent=indent, subsequent_indent=hanging, break_long_words=True
    ) or [""]


def tune_mail(result: TuneResult) -> str:
    """Return the tune as mail text: the baseline and the method, every knob tried (largest saving
    first) with its interval, boots, decision, evidence, source and where a kept saving came from,
    the recommended command line and the front of saving against risk."""
    median = "-" if result.baseline_median is None else f"{result.baseline_median:.4g} {result.unit}"
    lines = _wrap(
        f"Boot-time tuning of {result.metric} (bootscope tune): baseline command line"
        f" '{result.baseline_append or '(none)'}', median {median}; {result.boots_spent} boots"
        f" (stored runs {', '.join(map(str, result.runs))})."
    )
    lines += _wrap(
        "Each knob was booted against the baseline, interleaved; a saving is the Hodges-Lehmann"
        " shift with its 95% distribution-free interval (baseline minus tuned) and counts only when"
        " the whole interval is a saving."
    )
    lines.append("")
    ranked = sorted(result.tried, key=lambda t: -(t.verdict.saving or float("-inf")))
    for rank, t in enumerate(ranked, start=1):
        v = t.verdict
        lines += _wrap(f"{rank}. {t.knob.name} ({t.knob.risk})", "  ", "     ")
        decision = v.decision + (f": {v.why}" if v.why else "")
        lines += _wrap(
            f"{amount(v.saving, result.unit)} {interval_text(v, result.unit)}, {v.boots} boots a side;"
            f" {decision}",
            "     ",
            "     ",
        )
        lines += _wrap(f"evidence: {t.knob.evidence}; source: {t.knob.source}", "     ", "     ")
        if t.where:
            lines += _wrap(f"saved in: {where_text(t.where)}", "     ", "     ")
    lines.append("")
    r = result.recommended
    if r is None:
        lines += _wrap("No knob showed a saving: the baseline's command line stays.")
    else:
        lines += _wrap("Recommended command line:")
        lines += _wrap(r.append or "(empty)", "  ", "  ")
        if r.qemu_args:
            lines += _wrap("and the QEMU options:")
            lines += _wrap(qemu_text(r.qemu_args), "  ", "  ")
        if r.left_out:
            lines += _wrap(f"{left_out_text(r.left_out).capitalize()}.")
        lines += _wrap(
            f"It saves {amount(r.verdict.saving, result.unit)} {interval_text(r.verdict, result.unit)}"
            f" ({r.verdict.decision}, booted together against the baseline); the knobs alone"
            f" summed to {amount(r.sum_of_singles, result.unit)}."
            + (
                f" The kept knobs {r.combination}: the best one alone is recommended."
                if r.combination
                else ""
            )
        )
    if result.front:
        lines += _wrap(f"Saving by the risk accepted (sums of single savings): {front_text(result)}.")
    return "\n".join(lines) + "\n"

"""How a tune is shown: its JSON document, its terminal text (80 columns by default) and the
Markdown a maintainer can paste into a mail or a pull request. Savings are in the metric's unit,
positive when the tuned boot is faster; an interval that holds zero is never called a saving."""

from __future__ import annotations

import json
import shlex
from typing import Any

from bootscope.report.text_table import Column, TextTable, lay_out, paragraph
from bootscope.usecases.tune.account import Moved
from bootscope.usecases.tune.decide import Verdict
from bootscope.usecases.tune.knob import masked_units
from bootscope.usecases.tune.search import TuneResult

# Left out, in this order, when the terminal is too narrow.
_DROPPABLE = ("boots", "risk")


def amount(value: float | None, unit: str) -> str:
    """Return a saving in its unit (milliseconds for seconds), signed; '-' for none."""
    if value is None:
        return "-"
    return f"{value * 1000:+.1f} ms" if unit == "s" else f"{value:+.4g} {unit}"


def interval_text(verdict: Verdict, unit: str) -> str:
    """Return a verdict's interval as '[low, high]' in the saving's unit; '-' for none."""
    if verdict.ci is None:
        return "-"
    return f"[{amount(verdict.ci[0], unit)}, {amount(verdict.ci[1], unit)}]"


def _moved(moved: Moved) -> dict[str, Any]:
    ci = list(moved.ci_s) if moved.ci_s else None
    return {
        "kind": moved.kind, "name": moved.name, "saving": moved.saving_s, "ci": ci,
        "resolved": moved.resolved, "status": moved.status,
    }  # fmt: skip


def tune_document(result: TuneResult) -> dict[str, Any]:
    """Return the tune as the documented JSON-able dict: ``{"metric", "unit", "baseline": {"append",
    "median"}, "candidates": [{"knob", "risk", "source", "effect", "evidence", "saving", "ci",
    "boots", "decision", "why", "where": [{"kind", "name", "saving", "ci", "resolved", "status"}]}],
    "pareto": [{"risk", "knobs", "saving_sum"}], "untried": [knob...], "recommended": {"append",
    "knobs", "masks", "qemu_args", "left_out", "saving", "ci", "decision", "sum_of_singles",
    "combination"} | null,
    "boots_spent", "runs"}``;
    ``where`` is diff's account of a kept knob's saving (seconds, the largest moves first),
    ``pareto`` the front of summed single savings against the risk accepted, and ``combination``
    says why the recommendation is one knob when the kept ones together failed."""
    front = result.front
    recommended = None
    if result.recommended is not None:
        r = result.recommended
        recommended = {
            "append": r.append, "knobs": list(r.knobs), "masks": masked_units(r.append),
            "qemu_args": list(r.qemu_args), "left_out": list(r.left_out),
            "saving": r.verdict.saving, "ci": list(r.verdict.ci) if r.verdict.ci else None,
            "decision": r.verdict.decision,
            "sum_of_singles": r.sum_of_singles, "combination": r.combination,
        }  # fmt: skip
    return {
        "metric": result.metric,
        "unit": result.unit,
        "baseline": {"append": result.baseline_append, "median": result.baseline_median},
        "candidates": [
            {
                "knob": t.knob.name,
                "risk": t.knob.risk,
                "source": t.knob.source,
                "effect": t.knob.effect,
                "evidence": t.knob.evidence,
                "saving": t.verdict.saving,
                "ci": list(t.verdict.ci) if t.verdict.ci else None,
                "boots": t.verdict.boots,
                "decision": t.verdict.decision,
                "why": t.verdict.why,
                "where": [_moved(m) for m in t.where],
            }
            for t in result.tried
        ],
        "pareto": [{"risk": p.risk, "knobs": list(p.knobs), "saving_sum": p.saving_sum} for p in front],
        "untried": [k.name for k in result.untried],
        "recommended": recommended,
        "boots_spent": result.boots_spent,
        "runs": list(result.runs),
    }


def tune_json(result: TuneResult) -> str:
    """Return :func:`tune_document` as indented JSON text with a final newline."""
    return json.dumps(tune_document(result), indent=2) + "\n"


def _table(result: TuneResult) -> TextTable:
    headers = ("knob", "risk", "saving", "95% interval", "boots", "decision")
    table = TextTable(
        tuple(
            Column(h, right=h in ("saving", "boots"), fold=h in ("knob", "risk", "95% interval", "decision"))
            for h in headers
        )
    )
    ranked = sorted(result.tried, key=lambda t: -(t.verdict.saving or float("-inf")))
    for t in ranked:
        decision = t.verdict.decision + (f": {t.verdict.why}" if t.verdict.why else "")
        table.add_row(
            t.knob.name, t.knob.risk, amount(t.verdict.saving, result.unit),
            interval_text(t.verdict, result.unit), str(t.verdict.boots), decision,
        )  # fmt: skip
    return table


def where_text(moved: tuple[Moved, ...]) -> str:
    """Return where a saving came from: 'kind name +N ms' per moved component."""
    return ", ".join(f"{m.kind} {m.name} {amount(m.saving_s, 's')}{_mark(m)}" for m in moved)


def _mark(moved: Moved) -> str:
    gone = " (gone when tuned)" if moved.status == "disappeared" else ""
    return gone + ("" if moved.resolved else " (not resolved by these boots)")


def left_out_text(names: tuple[str, ...]) -> str:
    """Return the sentence naming the kept knobs left out of the recommended combination."""
    return f"left out of it (a better knob sets the same thing): {', '.join(names)}"


def qemu_text(qemu_args: tuple[str, ...]) -> str:
    """Return QEMU options as one shell-quoted line (``-machine hpet=off``)."""
    return " ".join(shlex.quote(arg) for arg in qemu_args)


def front_text(result: TuneResult) -> str:
    """Return the Pareto front of saving against risk as one clause per risk class."""
    return "; ".join(
        f"{p.risk}{' and below' if p.risk != 'safe' else ''}: {amount(p.saving_sum, result.unit)}"
        f" ({', '.join(p.knobs)})"
        for p in result.front
    )


def tune_text(result: TuneResult, width_cells: int) -> str:
    """Return the tune as terminal text: the baseline, each knob tried (largest saving first), the
    recommendation and what the budget left untried."""
    from bootscope.report.text_table import drop_to_fit

    median = "-" if result.baseline_median is None else f"{result.baseline_median:.4g} {result.unit}"
    boots = f"{result.boots_spent} boot{'s' if result.boots_spent != 1 else ''}"
    lines = paragraph(
        f"tune {result.metric}: baseline {result.baseline_append or '(no command line)'!r}, median {median};"
        f" {boots} in runs {', '.join(map(str, result.runs))}",
        width_cells,
    )
    if not result.tried:
        why = (
            "no knob this boot gives a reason for matches --only"
            if result.only
            else ("this boot shows no sink the catalogue knows")
        )
        lines += paragraph(f"nothing to try: {why}", width_cells)
    else:
        table, dropped = drop_to_fit(_table(result), width_cells, _DROPPABLE)
        lines += ["", *lay_out(table, width_cells)]
        if dropped:
            lines += paragraph(f"(left out to fit: {', '.join(dropped)})", width_cells)
    lines.append("")
    for t in result.tried:
        if t.where:
            lines += paragraph(f"{t.knob.name} saved it in: {where_text(t.where)}", width_cells)
    if result.front:
        lines += paragraph(
            f"saving by the risk accepted (sums of single savings): {front_text(result)}", width_cells
        )
    r = result.recommended
    if r is None:
        lines += paragraph("no knob showed a saving: keep the baseline's command line", width_cells)
    else:
        lines += paragraph(
            f"recommended ({', '.join(r.knobs)}): {r.append!r}: {amount(r.verdict.saving, result.unit)}"
            f" {interval_text(r.verdict, result.unit)}"
            f" ({r.verdict.decision}); the knobs alone summed to {amount(r.sum_of_singles, result.unit)}",
            width_cells,
        )
        if r.qemu_args:
            lines += paragraph(f"with the QEMU options: {qemu_text(r.qemu_args)}", width_cells)
        if r.left_out:
            lines += paragraph(f"{left_out_text(r.left_out)}", width_cells)
        if r.combination:
            lines += paragraph(
                f"the kept knobs {r.combination}: the best one alone is recommended", width_cells
            )
    if result.untried:
        lines += paragraph(f"not tried (budget): {', '.join(k.name for k in result.untried)}", width_cells)
    return "\n".join(lines) + "\n"


def tune_markdown(result: TuneResult) -> str:
    """Return the tune as Markdown: the method, a table of the knobs tried and the recommendation."""
    out = [
        f"## Boot-time tuning of `{result.metric}`",
        "",
        f"Baseline command line: `{result.baseline_append or '(none)'}`; {result.boots_spent} boots"
        f" (runs {', '.join(map(str, result.runs))}). Each knob was booted against the baseline,"
        " interleaved; a saving is the Hodges-Lehmann shift with its 95% distribution-free interval,"
        " counted only when the whole interval is a saving.",
        "",
        "| knob | risk | saving | 95% interval | boots | decision | evidence | source |",
        "| --- | --- | ---: | --- | ---: | --- | --- | --- |",
    ]
    for t in result.tried:
        decision = t.verdict.decision + (f": {t.verdict.why}" if t.verdict.why else "")
        cells = [
            f"`{t.knob.name}`", t.knob.risk, amount(t.verdict.saving, result.unit),
            interval_text(t.verdict, result.unit), str(t.verdict.boots), decision, t.knob.evidence,
            t.knob.source,
        ]  # fmt: skip
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out.append("")
    for t in result.tried:
        if t.where:
            out.append(f"- `{t.knob.name}` saved it in: {where_text(t.where)}.")
    if result.front:
        out += [f"- Saving by the risk accepted (sums of single savings): {front_text(result)}.", ""]
    r = result.recommended
    if r is None:
        out.append("No knob showed a saving.")
    else:
        out.append(
            f"Recommended: `{r.append}`"
            + (f" with the QEMU options `{qemu_text(r.qemu_args)}`" if r.qemu_args else "")
            + f": {amount(r.verdict.saving, result.unit)}"
            f" {interval_text(r.verdict, result.unit)}"
            f" ({r.verdict.decision}); the knobs alone summed to {amount(r.sum_of_singles, result.unit)}."
            + (
                f" The kept knobs {r.combination}: the best one alone is recommended."
                if r.combination
                else ""
            )
            + (f" {left_out_text(r.left_out).capitalize()}." if r.left_out else "")
        )
    return "\n".join(out) + "\n"
